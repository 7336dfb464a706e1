/**
 * Child processes for tests that need real process boundaries: a standalone embedded engine (the
 * database that outlives gateway crashes) and gateway processes that can be SIGKILLed.
 *
 * The gateway entry defaults to test/payments/support/gateway-process.ts (what src/main.ts does, plus
 * the payments core jobs and a `test.count` timer kind); it prints `{"ready":"<url>"}` once it serves.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const GATEWAY_ENTRY = path.join(ROOT, 'test/payments/support/gateway-process.ts');
const ENGINE_CLI = path.join(ROOT, 'src/db/embedded/cli.ts');
const START_TIMEOUT_MS = 60_000;

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
}

export interface EngineProcess extends ChildHandle {
  uri: string;
}

export interface SpawnGatewayOptions {
  /** Entry module run with tsx; default the test gateway entry described above. */
  entry?: string;
}

/** Spawns a gateway on an ephemeral port (unless env.PORT says otherwise) against `mongodbUri`. */
export async function spawnGateway(
  mongodbUri: string,
  env: Record<string, string> = {},
  opts: SpawnGatewayOptions = {},
): Promise<GatewayProcess> {
  const { handle, value } = await spawnTsx(
    opts.entry ?? GATEWAY_ENTRY,
    [],
    {
      VITEST: '',
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      MONGODB_URI: mongodbUri,
      PORT: '0',
      HOST: '127.0.0.1',
      ACCOUNT_CREATION_PER_MINUTE: '100000',
      PUBLIC_RATE_LIMIT_PER_MINUTE: '100000',
      RATE_LIMIT_PER_MINUTE: '100000',
      TIMER_POLL_MS: '100',
      SHUTDOWN_GRACE_MS: '2000',
      ...env,
    },
    /\{"ready":"([^"]+)"\}/,
    'gateway',
  );
  return { ...handle, url: value };
}

/**
 * Spawns the standalone embedded engine (`src/db/embedded/cli.ts`), memory only unless env.DATA_DIR
 * is given, on an ephemeral port; resolves with its connection string.
 */
export async function spawnEngine(env: Record<string, string> = {}): Promise<EngineProcess> {
  const memory = env.DATA_DIR === undefined || env.DATA_DIR === '';
  const { handle, value } = await spawnTsx(
    ENGINE_CLI,
    memory ? ['--memory'] : [],
    { DB_PORT: '0', DB_HOST: '127.0.0.1', ...env },
    /MONGODB_URI=(\S+)/,
    'engine',
  );
  return { ...handle, uri: value };
}

async function spawnTsx(
  entry: string,
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  what: string,
): Promise<{ handle: ChildHandle; value: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
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
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const exited = new Promise<void>((resolve) => {
    if (gone()) resolve();
    else child.once('exit', () => resolve());
  });
  const value = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${what} did not start within ${START_TIMEOUT_MS} ms:\n${out}`));
    }, START_TIMEOUT_MS);
    child.stdout!.on('data', (chunk: Buffer) => {
      append(chunk);
      const m = ready.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.stderr!.on('data', append);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code ?? signal}) before it was ready:\n${out}`));
    });
  });
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
