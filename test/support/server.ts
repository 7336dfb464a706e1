import { loadConfig, type Config } from '../../src/config';
import { startGateway, type Gateway } from '../../src/server';
import type { GatewayRuntime } from '../../src/domain/gatewayRuntime';
import { TEST_WEBHOOK_SECRETS_KEY } from './processes';

export interface TestServer {
  baseUrl: string;
  gateway: Gateway;
  /** The Config the gateway was started with (per-gateway state, such as its write admission, is keyed on it). */
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
  const config = loadConfig({
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
  const gateway = await startGateway(config, opts);
  return { baseUrl: gateway.url, gateway, config: gateway.config, stop: () => gateway.close() };
}

/**
 * The test gateway for the suites where payments move on in real time: every gateway runs the payments
 * core's background work (timer poller every TIMER_POLL_MS, 100 ms by default; outbox sweeper).
 */
export async function startGatewayWithJobs(env: Record<string, string> = {}): Promise<TestServer> {
  return startTestServer(env);
}
