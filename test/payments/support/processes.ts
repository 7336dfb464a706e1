import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/**
 * 'main': the real entry point (`tsx src/main.ts`, as `npm start`). 'test': the same gateway plus a
 * `test.count` timer kind (support/gateway-process.ts), for counting handler runs.
 */
const ENTRIES = {
  main: path.join(ROOT, 'src/main.ts'),
  test: path.join(ROOT, 'test/payments/support/gateway-process.ts'),
} as const;
const READY = /\{"ready":"([^"]+)"\}|gateway listening on (http:\/\/[^"\s]+)/;

export interface GatewayProcess {
  url: string;
  child: ChildProcess;
  /** SIGKILL: no graceful anything. */
  kill(): Promise<void>;
  /** SIGTERM and wait for exit. */
  stop(): Promise<void>;
  output(): string;
}

/** Spawns a gateway (tsx) on an ephemeral port against `mongodbUri`; resolves once it serves. */
export async function spawnGateway(
  mongodbUri: string,
  opts: { entry?: keyof typeof ENTRIES; env?: Record<string, string> } = {},
): Promise<GatewayProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', ENTRIES[opts.entry ?? 'main']], {
    cwd: ROOT,
    env: {
      ...process.env,
      VITEST: '',
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      MONGODB_URI: mongodbUri,
      PORT: '0',
      HOST: '127.0.0.1',
      ACCOUNT_CREATION_PER_MINUTE: '100000',
      RATE_LIMIT_PER_MINUTE: '100000',
      TIMER_POLL_MS: '100',
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start in 60 s:\n${out}`)), 60_000);
    let ready = false;
    // Keep a bounded tail of the output for diagnostics (request logs keep coming).
    const append = (c: Buffer) => {
      out = (out + c.toString()).slice(-20_000);
    };
    child.stdout!.on('data', (chunk: Buffer) => {
      append(chunk);
      if (ready) return;
      const m = READY.exec(out);
      if (m) {
        ready = true;
        clearTimeout(timer);
        resolve((m[1] ?? m[2])!);
      }
    });
    child.stderr!.on('data', append);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code} before it was ready:\n${out}`));
    });
  });
  return {
    url,
    child,
    output: () => out,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
