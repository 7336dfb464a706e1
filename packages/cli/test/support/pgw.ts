import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const PGW_BIN = path.join(CLI_ROOT, 'bin/pgw.mjs');
export const REPO_ROOT = path.resolve(CLI_ROOT, '../..');

/** A throw-away config dir (XDG_CONFIG_HOME) and an environment without the developer's PGW_* settings. */
export function tempConfigHome(): { home: string; env: NodeJS.ProcessEnv; cleanup(): void } {
  const home = mkdtempSync(path.join(os.tmpdir(), 'pgw-cli-test-'));
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: home };
  delete env.PGW_API_KEY;
  delete env.PGW_BASE_URL;
  return { home, env, cleanup: () => rmSync(home, { recursive: true, force: true }) };
}

export interface PgwResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the bin to completion (as `npx pgw` would: node on bin/pgw.mjs, no build step). */
export function runPgw(args: string[], env: NodeJS.ProcessEnv, opts: { npx?: boolean } = {}): Promise<PgwResult> {
  const p = startPgw(args, env, opts);
  return p.exited.then((code) => ({ code, stdout: p.stdout(), stderr: p.stderr() }));
}

export interface PgwProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first stdout line that satisfies `match` (already printed or still to come). */
  line(match: (line: string) => boolean): Promise<string>;
  exited: Promise<number | null>;
  signal(sig: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts the bin and follows its output line by line (for `listen` and the tails, which run until
 * stopped). With `npx`, runs `npx pgw …` from the repository root as a reader would, in its own process
 * group so that a signal reaches pgw and not only npx.
 */
export function startPgw(args: string[], env: NodeJS.ProcessEnv, opts: { npx?: boolean } = {}): PgwProcess {
  const child = opts.npx
    ? spawn('npx', ['--no-install', 'pgw', ...args], { env, cwd: REPO_ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, [PGW_BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiters: { match: (l: string) => boolean; resolve: (l: string) => void }[] = [];
  const lines: string[] = [];
  let partial = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    partial += chunk;
    const parts = partial.split('\n');
    partial = parts.pop()!;
    for (const l of parts) {
      lines.push(l);
      for (const w of [...waiters]) {
        if (w.match(l)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(l);
        }
      }
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    line(match) {
      const found = lines.find(match);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        waiters.push({ match, resolve });
        void exited.then((code) => reject(new Error(`pgw exited (${code}) before the expected line; stdout:\n${out}\nstderr:\n${err}`)));
      });
    },
    signal(sig) {
      if (child.exitCode === null && child.signalCode === null) {
        if (opts.npx) process.kill(-child.pid!, sig);
        else child.kill(sig);
      }
      return exited;
    },
  };
}

export interface ReceivedDelivery {
  headers: http.IncomingHttpHeaders;
  body: string;
  event: { id: string; type: string; data: { id: string } };
}

/** A local webhook receiver: keeps every POST and lets a test wait until some arrived. */
export async function startReceiver(): Promise<{ url: string; received: ReceivedDelivery[]; until(done: (r: ReceivedDelivery[]) => boolean): Promise<void>; close(): Promise<void> }> {
  const received: ReceivedDelivery[] = [];
  const waiters: { done: (r: ReceivedDelivery[]) => boolean; resolve: () => void }[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c));
    req.on('end', () => {
      received.push({ headers: req.headers, body, event: JSON.parse(body) });
      res.end('ok');
      for (const w of [...waiters]) {
        if (w.done(received)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    until: (done) => (done(received) ? Promise.resolve() : new Promise((resolve) => waiters.push({ done, resolve }))),
    close: () => new Promise((r) => server.close(() => r())),
  };
}
