import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { cpuProfileArgs, freePort, ROOT, spawnChild, spawnCompiled, spawnTs, TMP, waitForHttp, type Child } from './processes';

const run = promisify(execFile);

/** Extra node flags for a child from the environment, e.g. BENCH_GATEWAY_NODE_ARGS="--trace-gc". */
function extraNodeArgs(name: string): string[] {
  return (process.env[name] ?? '').split(/\s+/).filter(Boolean);
}

export interface Service {
  child: Child;
  url: string;
  stop(): Promise<void>;
}

/**
 * The embedded engine in its own process (`npm run db`), memory only unless `dataDir` is given; its
 * bundle (dist/db.js) when `compiled`, else its source through tsx.
 */
export async function startDatabase(opts: { dataDir: string; profile: boolean; compiled?: boolean }): Promise<Service> {
  const port = await freePort();
  if (opts.dataDir) fs.mkdirSync(opts.dataDir, { recursive: true });
  const child = (opts.compiled ? spawnCompiled : spawnTs)(
    'db',
    opts.compiled ? 'dist/db.js' : 'packages/embedded-mongo/src/cli.ts',
    { DB_PORT: String(port), DB_HOST: '127.0.0.1', DATA_DIR: opts.dataDir },
    [...(opts.profile ? cpuProfileArgs('db') : []), ...extraNodeArgs('BENCH_DB_NODE_ARGS')],
  );
  const m = await child.waitForLine(/^MONGODB_URI=(\S+)/, 30_000);
  return { child, url: m[1]!, stop: () => child.stop() };
}

/**
 * What `npm start` sets for the gateway, read from its command line in package.json
 * (`VAR=value ... node --flag ... dist/main.js`), so that every bench gateway runs as it does.
 */
export const NPM_START = ((): { env: Record<string, string>; nodeFlags: string[] } => {
  const start = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start ?? '';
  const words = start.split(/\s+/).filter(Boolean);
  const node = words.indexOf('node');
  if (node < 0) throw new Error(`bench/lib/services.ts: "npm start" (${start}) does not run node`);
  const env = Object.fromEntries(words.slice(0, node).map((w) => w.split('=', 2) as [string, string]));
  return { env, nodeFlags: words.slice(node + 1).filter((w) => w.startsWith('--')) };
})();
/** WEBHOOK_SECRETS_KEY of bench gateways (32 bytes, base64). */
export const BENCH_WEBHOOK_SECRETS_KEY = 'YmVuY2gtb25seSB3ZWJob29rIHNlY3JldHMga2V5MzI=';

/**
 * The gateway in its own process (`npm start` with the bench's env). The rate limits are raised so that
 * they never answer 429 during a run: the limiter itself still counts every request in the database,
 * as it does in production. (RATE_LIMIT_PER_MINUTE is capped at 100 000 000 by src/config.ts.) So is the
 * cap on sockets per client address: every load generator here is one address, and bench:rail's opens a
 * socket per request in flight (300/s with POSTs slow during the first seconds: more than the default 256).
 */
export async function startGatewayProcess(opts: {
  mongodbUri: string;
  profile: boolean;
  name: string;
  /** Extra environment and node flags (bench/profile/postCost.ts compares two gateways). */
  env?: Record<string, string>;
  nodeArgs?: string[];
  /**
   * Run the bundle `npm start` runs (dist/main.js, built once per bench process) instead of src/main.ts
   * through tsx: a start as long as production's (a restart measurement), no tsx loader thread in profiles.
   * The first compiled start builds (a few seconds): to time a start, call buildOnce() (processes.ts) first.
   */
  compiled?: boolean;
  /**
   * With `compiled`: run the bundle of another checkout (its dist/main.js, built there beforehand), to
   * compare two versions of the gateway on one machine at one time (bench/profile/postCost.ts, AB_TREE).
   */
  tree?: string;
}): Promise<Service> {
  const port = await freePort();
  const spawn = opts.compiled ? spawnCompiled : spawnTs;
  const child = spawn(
    opts.name,
    opts.compiled ? path.join(opts.tree ?? '', 'dist/main.js') : 'src/main.ts',
    {
      PORT: String(port),
      HOST: '127.0.0.1',
      MONGODB_URI: opts.mongodbUri,
      // Required with MONGODB_URI (it encrypts the stored webhook secrets); bench data only.
      WEBHOOK_SECRETS_KEY: BENCH_WEBHOOK_SECRETS_KEY,
      RATE_LIMIT_PER_MINUTE: '100000000',
      ACCOUNT_CREATION_PER_MINUTE: '100000000',
      PUBLIC_RATE_LIMIT_PER_MINUTE: '100000000',
      // The outgoing webhook caps too (docs/webhooks.md): bench:rail sends every payment's webhooks, from
      // one account to one receiver, far above the 6,000 a minute a real integration is allowed.
      WEBHOOK_MAX_REQUESTS_PER_ACCOUNT_PER_MINUTE: '100000000',
      WEBHOOK_MAX_REQUESTS_PER_HOST_PER_MINUTE: '100000000',
      HTTP_MAX_CONNECTIONS_PER_IP: '100000',
      // No total cap (default 10,000): the fan-out phases hold 10,000 subscribers and their writers.
      HTTP_MAX_CONNECTIONS: '0',
      LOG_LEVEL: process.env.BENCH_GATEWAY_LOG_LEVEL ?? 'warn',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      SHUTDOWN_GRACE_MS: '3000',
      NODE_ENV: process.env.BENCH_GATEWAY_NODE_ENV ?? 'production',
      ...NPM_START.env,
      ...opts.env,
    },
    [...NPM_START.nodeFlags, ...(opts.profile ? cpuProfileArgs(opts.name) : []), ...extraNodeArgs('BENCH_GATEWAY_NODE_ARGS'), ...(opts.nodeArgs ?? [])],
  );
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/readyz`, 60_000, (s) => s === 200);
  return { child, url, stop: () => child.stop() };
}

/** The framework ceiling: Express 5, one route answering a small JSON document. */
export async function startExpressBaseline(): Promise<Service> {
  const port = await freePort();
  const child = spawnTs('express-baseline', 'bench/baselines/expressServer.ts', { PORT: String(port), NODE_ENV: 'production' });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/v1/ping`, 30_000, (s) => s === 200);
  return { child, url, stop: () => child.stop() };
}

export const PRISM_VERSION = '5.14.2';
const PRISM_PREFIX = path.join(TMP, 'prism');
const PRISM_BIN = path.join(PRISM_PREFIX, 'node_modules/.bin/prism');

/**
 * Stoplight Prism mocking our own openapi.yaml: what an integrator would otherwise run as a sandbox.
 * Installed on demand into bench/.tmp/prism (gitignored), never into package.json.
 */
export async function ensurePrism(): Promise<string> {
  if (fs.existsSync(PRISM_BIN)) return PRISM_BIN;
  fs.mkdirSync(PRISM_PREFIX, { recursive: true });
  console.log(`installing @stoplight/prism-cli@${PRISM_VERSION} into bench/.tmp/prism ...`);
  await run('npm', ['install', '--prefix', PRISM_PREFIX, '--no-save', '--no-audit', '--no-fund', `@stoplight/prism-cli@${PRISM_VERSION}`], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  if (!fs.existsSync(PRISM_BIN)) throw new Error(`prism not found at ${PRISM_BIN} after npm install`);
  return PRISM_BIN;
}

export async function startPrism(): Promise<Service> {
  const bin = await ensurePrism();
  const port = await freePort();
  const child = spawnChild('prism', bin, ['mock', 'openapi.yaml', '-p', String(port), '-h', '127.0.0.1']);
  await child.waitForLine(/Prism is listening/, 90_000);
  return { child, url: `http://127.0.0.1:${port}`, stop: () => child.stop() };
}
