import { loadConfig, type Config } from '../../src/config';
import { startGateway, type Gateway } from '../../src/server';
import type { GatewayRuntime } from '../../src/domain/gatewayRuntime';
import { TEST_WEBHOOK_SECRETS_KEY } from './processes';

export interface TestServer {
  baseUrl: string;
  gateway: Gateway;
  /** The Config the gateway serves with (gateway.config). */
  config: Config;
  stop(): Promise<void>;
}

/**
 * Starts the real gateway on an ephemeral port over the in-process embedded engine (memory only), or
 * over MONGODB_URI when set. Account creation and public routes are not rate limited here (tests make a
 * fresh account each); tests of those limits pass their own env. `register`: the test's own handlers or
 * hooks, on the gateway's runtime before its services start.
 */
export async function startTestServer(env: Record<string, string> = {}, opts: { register?: (runtime: GatewayRuntime) => void } = {}): Promise<TestServer> {
  // The process holds one mongoose connection, to one database: a gateway of its own (its own engine, or
  // the MONGODB_URI it is given) cannot run beside the ones earlier files shared. They start again for
  // the next file that asks.
  await closeSharedGateways();
  const config = testConfig(env);
  const gateway = await startGateway(config, opts);
  return { baseUrl: gateway.url, gateway, config: gateway.config, stop: () => gateway.close() };
}

/** The Config of a test gateway: an ephemeral port on loopback, account creation and public routes not rate limited, `env` over it. */
function testConfig(env: Record<string, string>): Config {
  return loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    ACCOUNT_CREATION_PER_MINUTE: '1000000',
    PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    SHUTDOWN_GRACE_MS: '2000',
    MONGODB_URI: process.env.MONGODB_URI ?? '',
    WEBHOOK_SECRETS_KEY: TEST_WEBHOOK_SECRETS_KEY,
    ...env,
  });
}

/**
 * The test gateway for the suites where payments move on in real time: every gateway runs the payments
 * core's background work (timer poller every TIMER_POLL_MS, 100 ms by default; outbox sweeper).
 */
export async function startGatewayWithJobs(env: Record<string, string> = {}): Promise<TestServer> {
  return startTestServer(env);
}

/**
 * The gateway a test file shares with the next files of its vitest worker that ask for the same `env`
 * (the suite runs with `isolate: false`, so this module lives as long as the worker): one gateway start
 * instead of one per file. Each test makes its own sandbox account on it, as every test does. A file that
 * stops, restarts or reconfigures its gateway, registers hooks on it, or needs a database no other file
 * wrote to starts its own with startTestServer. `stop()` leaves the shared gateway running for the next
 * file. One runs at a time (the process has one database connection): a file asking for another `env`,
 * or starting a gateway of its own, stops it first.
 */
let shared: { key: string; gateway: Promise<TestServer> } | undefined;

export async function sharedGateway(env: Record<string, string> = {}): Promise<TestServer> {
  const key = JSON.stringify(Object.entries(env).sort(([a], [b]) => a.localeCompare(b)));
  if (shared?.key !== key) {
    await closeSharedGateways();
    const gateway = startGateway(testConfig(env)).then((started) => ({ baseUrl: started.url, gateway: started, config: started.config, stop: async () => undefined }));
    const entry = { key, gateway };
    shared = entry;
    // A start that failed is not kept: the next file tries again.
    gateway.catch(() => shared === entry && (shared = undefined));
  }
  return shared!.gateway;
}

/** Stops the gateway this worker shares, if any (before a gateway of another configuration starts). */
export async function closeSharedGateways(): Promise<void> {
  const running = shared;
  shared = undefined;
  if (running) await (await running.gateway.catch(() => undefined))?.gateway.close();
}
