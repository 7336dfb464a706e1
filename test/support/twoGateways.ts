import { startEmbeddedMongo, type EmbeddedMongo } from '@pgw/embedded-mongo';
import { afterAll, beforeAll } from 'vitest';
import { spawnGateway, type GatewayProcess } from './processes';
import { startTestServer, type TestServer } from './server';

/** Two gateways on one database: `a` in the test's process, `b` a process of its own (cross-process cases). */
export interface TwoGateways {
  engine: EmbeddedMongo;
  a: TestServer;
  b: GatewayProcess;
}

/**
 * Starts them before the file's tests and stops them after; the returned object is filled in beforeAll.
 * `envB`: more settings for the spawned one (`a`, a test server, allows private webhook targets already).
 */
export function twoGatewaysOnOneDatabase(envB: Record<string, string> = {}): TwoGateways {
  const gateways = {} as TwoGateways;
  beforeAll(async () => {
    gateways.engine = await startEmbeddedMongo({ port: 0 });
    gateways.a = await startTestServer({ MONGODB_URI: gateways.engine.uri });
    gateways.b = await spawnGateway(gateways.engine.uri, envB);
  }, 120_000);
  afterAll(async () => {
    await gateways.b?.stop();
    await gateways.a?.stop();
    await gateways.engine?.close();
  }, 60_000);
  return gateways;
}
