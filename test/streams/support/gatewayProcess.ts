import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface GatewayProcess {
  url: string;
  child: ChildProcess;
  /** SIGKILL: nothing graceful happens. */
  kill(): Promise<void>;
  /** SIGTERM, and wait for the exit. */
  stop(): Promise<void>;
  output(): string;
}

/**
 * Runs the real entry point (`tsx src/main.ts`, as `npm start` does) on an ephemeral port against
 * `mongodbUri`, and resolves with its URL once it logs "gateway listening on http://...".
 */
export async function spawnGateway(mongodbUri: string, env: Record<string, string> = {}): Promise<GatewayProcess> {
  // GATEWAY_TEST_ENTRY lets a run use another entry (e.g. one that also starts extra jobs).
  const entry = process.env.GATEWAY_TEST_ENTRY || 'src/main.ts';
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
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
      PUBLIC_RATE_LIMIT_PER_MINUTE: '100000',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      SHUTDOWN_GRACE_MS: '3000',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start within 60 s:\n${out}`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /gateway listening on (http:\/\/[\d.:[\]a-z]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited (${code ?? signal}) before it was ready:\n${out}`));
    });
  });
  // Keep only the tail of the output so a chatty process does not grow the test's memory.
  child.stdout!.on('data', () => {
    if (out.length > 200_000) out = out.slice(-100_000);
  });
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    url,
    child,
    output: () => out,
    async kill() {
      if (alive()) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (alive()) child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
      if (alive()) child.kill('SIGKILL');
      await exited;
    },
  };
}
