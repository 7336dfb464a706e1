import { afterAll, beforeAll } from 'vitest';
import { startTestServer, type TestServer } from '../../support/server';
import { startReceiver, type Receiver } from './receiver';

/**
 * A gateway and a webhook receiver shared by one test file: started before its tests, stopped after.
 * Read `server` and `receiver` inside tests (they are set once the hooks have run).
 */
export function useGatewayAndReceiver(env: Record<string, string> = {}): { server: TestServer; receiver: Receiver } {
  const ctx = {} as { server: TestServer; receiver: Receiver };
  beforeAll(async () => {
    ctx.server = await startTestServer(env);
    ctx.receiver = await startReceiver();
  });
  afterAll(async () => {
    await ctx.server?.stop();
    await ctx.receiver?.close();
  });
  return ctx;
}
