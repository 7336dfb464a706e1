/**
 * Child processes for tests that need real process boundaries: a standalone embedded engine (the
 * database that outlives gateway crashes) and gateway processes that can be SIGKILLed and restarted,
 * on the same port if wanted.
 *
 * A gateway runs `dist/gateway.js`, the esbuild bundle of `src/main.ts` that `npm start` runs (built
 * here when missing or stale, once per worker), unless another entry is given, which runs through tsx;
 * it is ready when GET /healthz answers on its port. The engine runs its bundle too (`dist/db.js`).
 * Why bundles: a start through tsx took 4.5 s of CPU, the bundle's 1.4 s, and the suites start some
 * hundred child processes (docs/testing.md, "Where the time goes").
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const GATEWAY_BUNDLE = path.join(ROOT, 'dist/gateway.js');
const ENGINE_BUNDLE = path.join(ROOT, 'dist/db.js');
const START_TIMEOUT_MS = 60_000;

/**
 * WEBHOOK_SECRETS_KEY of test gateways: a gateway on MONGODB_URI needs one, and gateways sharing a
 * database must share it (the webhook secrets one stores, another signs with). Test data only.
 */
export const TEST_WEBHOOK_SECRETS_KEY = 'dGVzdC1vbmx5IHdlYmhvb2sgc2VjcmV0cyBrZXkgMzI=';

export interface ChildHandle {
  child: ChildProcess;
  pid: number;
  /** SIGKILL: no graceful anything. Resolves once the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM, wait (15 s at most), then SIGKILL. */
  stop(): Promise<void>;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  alive(): boolean;
}

export interface GatewayProcess extends ChildHandle {
  url: string;
  port: number;
}

export interface EngineProcess extends ChildHandle {
  uri: string;
}

export interface SpawnGatewayOptions {
  /** Entry module run with tsx; default the bundle of src/main.ts (dist/gateway.js). */
  entry?: string;
  /** Listening port; default a free one. Pass a killed gateway's port to restart it in place. */
  port?: number;
}

/** A port nobody listens on right now, below the ephemeral range (STABLE_PORTS says why). */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = STABLE_PORTS.from + Math.floor(Math.random() * (STABLE_PORTS.to - STABLE_PORTS.from));
    const free = await new Promise<boolean>((resolve) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

/**
 * Where freePort looks: below Linux's ephemeral range (32768-60999). A test that kills a server and
 * starts it again on the same port (the engine in an outage, a gateway after a SIGKILL) has clients
 * connecting to that port while nothing listens; with the port inside the ephemeral range, one of those
 * connects can be given it as its own local port and connect to itself (TCP simultaneous open: measured
 * here, one in ~4 300 connects to a dead loopback port). The client then talks to itself, and the server
 * coming back finds its port taken. A port outside the range is never a connect's local port.
 */
const STABLE_PORTS = { from: 20_000, to: 32_000 };

/** One TCP connect to 127.0.0.1:`port`: true when refused (or closed before it could be used). */
export function connectRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

/** Spawns a gateway against `mongodbUri`; resolves once GET /healthz answers 200. */
export async function spawnGateway(
  mongodbUri: string,
  env: Record<string, string> = {},
  opts: SpawnGatewayOptions = {},
): Promise<GatewayProcess> {
  const port = opts.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const { handle } = await spawnNode(
    opts.entry ? ['--import', 'tsx', opts.entry] : [(await currentBundles(), GATEWAY_BUNDLE)],
    {
      VITEST: '',
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      MONGODB_URI: mongodbUri,
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: url,
      ACCOUNT_CREATION_PER_MINUTE: '100000',
      PUBLIC_RATE_LIMIT_PER_MINUTE: '100000',
      RATE_LIMIT_PER_MINUTE: '100000',
      TIMER_POLL_MS: '100',
      SHUTDOWN_GRACE_MS: '2000',
      WEBHOOK_SECRETS_KEY: TEST_WEBHOOK_SECRETS_KEY,
      // One thread unless a test asks for npm start's background thread (the crash suite does, and the
      // compiled start test runs the bundle with it): from source, that thread compiles its TypeScript
      // through tsx at start, seconds of CPU that short multi-process workloads would otherwise pay for.
      BACKGROUND_THREAD: 'false',
      ...env,
      PORT: String(port),
    },
    async () => {
      try {
        return (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) })).status === 200 ? url : undefined;
      } catch {
        return undefined;
      }
    },
    'gateway',
  );
  return { ...handle, url, port };
}

/**
 * Spawns the standalone embedded engine (`packages/embedded-mongo/src/cli.ts`), memory only unless env.DATA_DIR
 * is given, on an ephemeral port; resolves with its connection string.
 */
export async function spawnEngine(env: Record<string, string> = {}): Promise<EngineProcess> {
  const memory = env.DATA_DIR === undefined || env.DATA_DIR === '';
  const { handle, value } = await spawnNode(
    [(await currentBundles(), ENGINE_BUNDLE), ...(memory ? ['--memory'] : [])],
    { DB_PORT: '0', DB_HOST: '127.0.0.1', ...env },
    async (out) => /MONGODB_URI=(\S+)/.exec(out)?.[1],
    'engine',
  );
  return { ...handle, uri: value };
}

/**
 * The gateway's bundles (build.mjs, target "gateway": dist/gateway.js, dist/db.js and the threads'),
 * rebuilt when a source changed since the last build: once per worker, a few ms when current. Two
 * workers building at once is safe: build.mjs renames each file over the old one.
 */
let bundles: Promise<unknown> | undefined;
function currentBundles(): Promise<unknown> {
  bundles ??= (import(path.join(ROOT, 'build.mjs')) as Promise<{ buildTargets: (names: string[], opts: { ifStale: boolean }) => Promise<string[]> }>).then((b) =>
    b.buildTargets(['gateway'], { ifStale: true }),
  );
  return bundles;
}

/** Spawns node with `args`; resolves once `ready(output)` gives a value (polled every 50 ms). */
async function spawnNode(
  args: string[],
  env: Record<string, string>,
  ready: (output: string) => Promise<string | undefined>,
  what: string,
): Promise<{ handle: ChildHandle; value: string }> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  // Keep the start and the last 200 kB: enough to diagnose, bounded however long the child runs.
  const append = (chunk: Buffer) => {
    out += chunk.toString();
    if (out.length > 400_000) out = out.slice(0, 100_000) + '\n…\n' + out.slice(-200_000);
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const exited = new Promise<void>((resolve) => {
    if (gone()) resolve();
    else child.once('exit', () => resolve());
  });
  const deadline = Date.now() + START_TIMEOUT_MS;
  let value: string | undefined;
  while (!(value = await ready(out))) {
    if (gone()) throw new Error(`${what} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${out}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${what} did not start within ${START_TIMEOUT_MS} ms:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const handle: ChildHandle = {
    child,
    pid: child.pid!,
    output: () => out,
    alive: () => !gone(),
    async kill() {
      if (!gone()) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (!gone()) child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000).unref())]);
      if (!gone()) child.kill('SIGKILL');
      await exited;
    },
  };
  return { handle, value };
}
