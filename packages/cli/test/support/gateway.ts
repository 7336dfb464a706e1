import { afterAll, afterEach, beforeAll } from 'vitest';
import { sharedGateway, type TestServer } from '../../../../test/support/server';
import { startPgw, startReceiver, tempConfigHome, type PgwProcess } from './pgw';

/**
 * The hooks every CLI test file needs: a real gateway for the file, a throw-away config dir
 * (XDG_CONFIG_HOME), and the pgw processes a test started, SIGKILLed after it whatever happened.
 */
export function usePgwGateway() {
  let server: TestServer;
  let config: ReturnType<typeof tempConfigHome>;
  const running: PgwProcess[] = [];
  beforeAll(async () => {
    server = await sharedGateway();
    config = tempConfigHome();
  });
  afterEach(async () => {
    for (const p of running.splice(0)) await p.signal('SIGKILL');
  });
  afterAll(async () => {
    await server.stop();
    config.cleanup();
  });
  return {
    get baseUrl() {
      return server.baseUrl;
    },
    get config() {
      return config;
    },
    /** Starts pgw with the config dir's environment plus `env`; stopped after the test. */
    start(args: string[], env: NodeJS.ProcessEnv = {}, opts: { npx?: boolean } = {}): PgwProcess {
      const p = startPgw(args, { ...config.env, ...env }, opts);
      running.push(p);
      return p;
    },
  };
}

/** One local webhook receiver for the whole file (support/pgw.ts startReceiver). */
export function useReceiver() {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver.close());
  return () => receiver;
}
