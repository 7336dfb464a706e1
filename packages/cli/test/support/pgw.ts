import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pgwBundle } from './bundle';

export const CLI_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
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

/** Runs pgw to completion (the test bundle, or with `npx` the bin as a reader runs it). */
export function runPgw(args: string[], env: NodeJS.ProcessEnv, opts: { npx?: boolean; stdin?: string } = {}): Promise<PgwResult> {
  const p = startPgw(args, env, opts);
  return p.exited.then((code) => ({ code, stdout: p.stdout(), stderr: p.stderr() }));
}

export interface PgwProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first stdout line that satisfies `match` (already printed or still to come). */
  line(match: (line: string) => boolean): Promise<string>;
  /** The same on stderr (notices). */
  errLine(match: (line: string) => boolean): Promise<string>;
  exited: Promise<number | null>;
  signal(sig: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts pgw and follows its output line by line (for `listen` and the tails, which run until
 * stopped): the bundle of its current source (bundle.ts says why), or with `npx`, `npx pgw …` from the
 * repository root as a reader would, in its own process group so that a signal reaches pgw and not only npx.
 */
export function startPgw(args: string[], env: NodeJS.ProcessEnv, opts: { npx?: boolean; stdin?: string } = {}): PgwProcess {
  // Standard input is empty (closed at once) unless `stdin` gives what to type.
  const input = opts.stdin === undefined ? 'ignore' : 'pipe';
  const child = opts.npx
    ? spawn('npx', ['--no-install', 'pgw', ...args], { env, cwd: REPO_ROOT, detached: true, stdio: [input, 'pipe', 'pipe'] })
    : spawn(process.execPath, [pgwBundle(), ...args], { env, stdio: [input, 'pipe', 'pipe'] });
  if (opts.stdin !== undefined) child.stdin!.end(opts.stdin);
  const stdout = followLines(child.stdout!);
  const stderr = followLines(child.stderr!);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const waitLine = (stream: ReturnType<typeof followLines>) => (match: (l: string) => boolean) =>
    Promise.race([
      stream.line(match),
      exited.then((code) => Promise.reject(new Error(`pgw exited (${code}) before the expected line; stdout:\n${stdout.text()}\nstderr:\n${stderr.text()}`))),
    ]);
  return {
    child,
    stdout: stdout.text,
    stderr: stderr.text,
    exited,
    line: waitLine(stdout),
    errLine: waitLine(stderr),
    signal(sig) {
      if (child.exitCode === null && child.signalCode === null) {
        if (opts.npx) process.kill(-child.pid!, sig);
        else child.kill(sig);
      }
      return exited;
    },
  };
}

/** The lines of one output stream, and a way to wait for one. */
function followLines(stream: NodeJS.ReadableStream) {
  let text = '';
  let partial = '';
  const lines: string[] = [];
  const waiters: { match: (l: string) => boolean; resolve: (l: string) => void }[] = [];
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    text += chunk;
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
  return {
    text: () => text,
    line: (match: (l: string) => boolean) => {
      const found = lines.find(match);
      return found !== undefined ? Promise.resolve(found) : new Promise<string>((resolve) => waiters.push({ match, resolve }));
    },
  };
}

export interface ReceivedDelivery {
  headers: http.IncomingHttpHeaders;
  body: string;
  event: { id: string; type: string; data: { id: string } };
}

/**
 * A local webhook receiver: keeps every POST and lets a test wait until some arrived. `status` picks each
 * answer's HTTP status (default 200), e.g. to fail the first attempts of an event.
 */
export async function startReceiver(status: (delivery: ReceivedDelivery, received: ReceivedDelivery[]) => number = () => 200): Promise<{ url: string; received: ReceivedDelivery[]; until(done: (r: ReceivedDelivery[]) => boolean): Promise<void>; close(): Promise<void> }> {
  const received: ReceivedDelivery[] = [];
  const waiters: { done: (r: ReceivedDelivery[]) => boolean; resolve: () => void }[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c));
    req.on('end', () => {
      const delivery = { headers: req.headers, body, event: JSON.parse(body) };
      received.push(delivery);
      res.statusCode = status(delivery, received);
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
