import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Child processes of the bench: the database, the gateway, the baselines. TypeScript children run as
 * `node --import tsx <file>` rather than `npx tsx <file>`, so the pid we hold is the process doing the
 * work (its /proc/<pid>/status is the gateway's memory, and --cpu-prof profiles it, not a launcher).
 */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const TMP = path.join(ROOT, 'bench/.tmp');
export const LOG_DIR = path.join(TMP, 'logs');
export const PROFILE_DIR = path.join(TMP, 'profiles');

export interface Child {
  name: string;
  proc: ChildProcess;
  pid: number;
  logFile: string;
  /** Resolves with the first stdout/stderr line matching `re`. */
  waitForLine(re: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<{ proc: ChildProcess }>();

/** Kills whatever is still running when the bench exits (error or Ctrl-C). */
export function killAllChildren(): void {
  for (const c of running) {
    try {
      c.proc.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  running.clear();
}

let exitHooked = false;
/** Children never outlive the bench, whether it ends normally, fails, or is interrupted. */
function hookExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  process.on('exit', killAllChildren);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(sig, () => {
      killAllChildren();
      process.exit(130);
    });
  }
}

/** A TypeScript child with an IPC channel (`process.send`), output shared with the bench's. */
export function forkTs(script: string): ChildProcess {
  const proc = fork(path.join(ROOT, script), [], { cwd: ROOT, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const entry = { proc };
  hookExit();
  running.add(entry);
  proc.once('exit', () => running.delete(entry));
  return proc;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

export function spawnChild(
  name: string,
  command: string,
  args: string[],
  env: Record<string, string | undefined> = {},
): Child {
  fs.mkdirSync(LOG_DIR, { recursive: true });
  const logFile = path.join(LOG_DIR, `${name}.log`);
  const log = fs.createWriteStream(logFile);
  const proc = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  if (!proc.pid) throw new Error(`could not start ${name}`);
  const watchers: Array<{ re: RegExp; resolve: (m: RegExpMatchArray) => void }> = [];
  const onData = (stream: NodeJS.ReadableStream) => {
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      log.write(chunk);
      if (watchers.length === 0) return;
      partial += chunk;
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        for (const w of [...watchers]) {
          const m = line.match(w.re);
          if (m) {
            watchers.splice(watchers.indexOf(w), 1);
            w.resolve(m);
          }
        }
      }
    });
  };
  onData(proc.stdout!);
  onData(proc.stderr!);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const child: Child = {
    name,
    proc,
    pid: proc.pid,
    logFile,
    waitForLine(re, timeoutMs) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${name}: no line matching ${re} within ${timeoutMs} ms (see ${logFile})`)), timeoutMs);
        const w = {
          re,
          resolve: (m: RegExpMatchArray) => {
            clearTimeout(timer);
            resolve(m);
          },
        };
        watchers.push(w);
        proc.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`${name} exited (code ${code}) before printing ${re} (see ${logFile})`));
        });
      });
    },
    async stop(graceMs = 15_000) {
      running.delete(child);
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
      log.end();
    },
  };
  hookExit();
  running.add(child);
  return child;
}

/** `node [nodeArgs] --import tsx <script>`, from the repository root. */
export function spawnTs(name: string, script: string, env: Record<string, string | undefined> = {}, nodeArgs: string[] = []): Child {
  return spawnChild(name, process.execPath, [...nodeArgs, '--import', 'tsx', script], env);
}

let built = false;
/**
 * `npm run build` (dist/main.js, dist/db.js from src/), once per bench process: a compiled child then
 * runs what this checkout's sources say, as `npm start` would.
 */
export function buildOnce(): void {
  if (built) return;
  execFileSync(process.execPath, ['build.mjs'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  built = true;
}

/** `node [nodeArgs] <script>` for a compiled script under dist/ (built first, see buildOnce). */
export function spawnCompiled(name: string, script: string, env: Record<string, string | undefined> = {}, nodeArgs: string[] = []): Child {
  buildOnce();
  return spawnChild(name, process.execPath, [...nodeArgs, script], env);
}

/**
 * Node flags that make a child write CPU profiles into PROFILE_DIR/<name>/ when it exits: one file per
 * thread (tsx's module loader runs in a worker thread of its own), hence a directory, not a file name.
 */
export function cpuProfileArgs(name: string): string[] {
  const dir = path.join(PROFILE_DIR, name);
  fs.mkdirSync(dir, { recursive: true });
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`];
}

/**
 * Polls `url` until `ok(status)`. Every 25 ms: a start is timed by this (bench:scale's restart), and a
 * coarser poll would add up to its interval to the figure.
 */
export async function waitForHttp(url: string, timeoutMs: number, ok: (status: number) => boolean = (s) => s < 500, intervalMs = 25): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      // A request accepted before the server handles requests may never be answered: time it out.
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      if (ok(res.status)) return;
      last = `status ${res.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`${url} not ready within ${timeoutMs} ms (${last})`);
}

/** Resident set size of a process in bytes (VmRSS of /proc/<pid>/status). */
export function rssBytes(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /VmRSS:\s+(\d+)\s+kB/.exec(status);
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) * 1024;
}

/** CPU time (user + system) a process has used so far, in ms, from /proc/<pid>/stat (10 ms ticks). */
export function cpuMs(pid: number): number {
  return statCpuMs(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/** utime + stime of a /proc stat line, in ms. */
function statCpuMs(stat: string): number {
  // Fields after the command name (which may hold spaces): state is field 3; utime, stime are 14, 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/**
 * CPU ms of each thread of a process (/proc/<pid>/task), by thread id, with its name: the main thread's id
 * is the pid; a worker thread (the embedded engine, the gateway's background thread) is one of the others.
 */
export function threadCpuMs(pid: number): Map<number, { name: string; ms: number }> {
  const out = new Map<number, { name: string; ms: number }>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      out.set(Number(tid), { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), ms: statCpuMs(stat) });
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/** The threads that used at least `minMs` between two threadCpuMs() readings, busiest first: "main 21.3 s, node 9.8 s, ...". */
export function busiestThreads(before: Map<number, { ms: number }>, after: Map<number, { name: string; ms: number }>, pid: number, minMs = 500): string {
  return [...after]
    .map(([tid, t]) => ({ name: tid === pid ? 'main' : `${t.name}#${tid}`, ms: t.ms - (before.get(tid)?.ms ?? 0) }))
    .filter((t) => t.ms >= minMs)
    .sort((a, b) => b.ms - a.ms)
    .map((t) => `${t.name} ${(t.ms / 1000).toFixed(1)} s`)
    .join(', ');
}

/** Runs `fn` and returns its result with the CPU ms each watched process used meanwhile. */
export async function withCpu<T>(pids: Record<string, number>, fn: () => Promise<T>): Promise<{ result: T; cpu: Record<string, number> }> {
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuMs(pid)]));
  const result = await fn();
  const cpu = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuMs(pid) - before[k]!]));
  return { result, cpu };
}
