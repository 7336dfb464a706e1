import { afterAll, beforeAll } from 'vitest';
import { startGatewayWithJobs, startTestServer, type TestServer } from '../../support/server';
import { startReceiver, type Receiver } from '../../support/receiver';

/**
 * A gateway and a webhook receiver shared by one test file: started before its tests, stopped after.
 * Read `server` and `receiver` inside tests (they are set once the hooks have run). `jobs`: with the
 * payments core's background work (startGatewayWithJobs), for suites whose payments move on in real time.
 */
export function useGatewayAndReceiver(env: Record<string, string> = {}, opts: { jobs?: boolean } = {}): { server: TestServer; receiver: Receiver } {
  const ctx = {} as { server: TestServer; receiver: Receiver };
  beforeAll(async () => {
    ctx.server = await (opts.jobs ? startGatewayWithJobs(env) : startTestServer(env));
    ctx.receiver = await startReceiver();
  });
  afterAll(async () => {
    await ctx.server?.stop();
    await ctx.receiver?.close();
  });
  return ctx;
}
