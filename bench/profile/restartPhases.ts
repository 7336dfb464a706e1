import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { freePort, ROOT, TMP } from '../lib/processes';
import { NPM_START } from '../lib/services';

/**
 * Where a restart of the compiled gateway on a large data directory spends its time:
 * `DATA_DIR=<a copy of a data directory> npx tsx bench/profile/restartPhases.ts` (env: RUNS, PROBE_DIST,
 * CPU_PROFILE=1, TIMELINE=1).
 *
 * Starts the gateway as `npm start` does (its environment and node flags, read from package.json by bench/lib/services.ts) on the
 * data directory RUNS times (default 3) and prints, for each start, when each of its log lines came
 * (relative to the spawn), when /readyz first answered 200 and when a known payment was first served (the
 * moment bench:scale's restart time ends), with the CPU time of each thread of the process at that moment
 * (/proc/<pid>/task: the main thread vs the engine's worker vs the rest). The time of a log line is its
 * own `time` field (pino's ISO time, to the millisecond), so the pipe's delay does not count.
 *
 * The payment: the first start on a directory (not timed: an older directory's first start also migrates
 * its indexes) creates a sandbox account and one payment in it and keeps their key and id beside the
 * directory (<dir>.probe.json). /readyz is polled every 10 ms until the port opens; once it is open,
 * the gateway holds a request until it is ready (src/server.ts), so no polling delay is added after that.
 *
 * The gateway is built into bench/.tmp/restart-dist (build.mjs's options, another output directory), so
 * that other builds of dist/ meanwhile do not change what is measured; PROBE_DIST=<dir> runs an existing
 * build instead (dist, say). CPU_PROFILE=1 adds --cpu-prof (profiles in bench/.tmp/profiles/restart,
 * one per thread; bench/profile/summarize.ts reads them). Never point DATA_DIR at a directory you want to
 * keep as it is: the gateway writes into it. TIMELINE=1 prints each thread's CPU per 100 ms until /readyz.
 */
const RUNS = Number(process.env.RUNS ?? 3);
const dataDir = path.resolve(process.env.DATA_DIR ?? '');
if (!process.env.DATA_DIR) throw new Error('set DATA_DIR to a copy of a data directory (the gateway writes into it)');

interface Probe {
  sk: string;
  paymentId: string;
}

async function buildPrivate(): Promise<string> {
  if (process.env.PROBE_DIST) return path.resolve(process.env.PROBE_DIST);
  const outdir = path.join(TMP, 'restart-dist');
  const { TARGETS } = (await import(pathToFileURL(path.join(ROOT, 'build.mjs')).href)) as { TARGETS: { gateway: { options: object } } };
  const esbuild = await import('esbuild');
  await esbuild.build({ ...TARGETS.gateway.options, outdir, write: true, metafile: false });
  return outdir;
}

interface Started {
  proc: ChildProcess;
  url: string;
  spawnedAt: number;
  lines: Array<{ at: number; msg: string; extra: string }>;
  /** Each thread's CPU when the line saying the engine is ready came: what follows is the gateway's own start. */
  cpuAtEngineReady?: Record<string, number>;
  exited: Promise<void>;
}

async function startGateway(dist: string, extraArgs: string[]): Promise<Started> {
  const port = await freePort();
  const env = {
    ...process.env,
    ...NPM_START.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
    NODE_ENV: 'production',
    RATE_LIMIT_PER_MINUTE: '100000000',
    ACCOUNT_CREATION_PER_MINUTE: '100000000',
  };
  const spawnedAt = Date.now();
  const proc = spawn(process.execPath, [...NPM_START.nodeFlags, ...extraArgs, path.join(dist, 'main.js')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Started['lines'] = [];
  const started: Started = { proc, url: `http://127.0.0.1:${port}`, spawnedAt, lines, exited: new Promise<void>((resolve) => proc.once('exit', () => resolve())) };
  let partial = '';
  proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    partial += chunk;
    const all = partial.split('\n');
    partial = all.pop() ?? '';
    for (const line of all) {
      try {
        const { time, msg, level: _l, pid: _p, hostname: _h, service: _s, ...rest } = JSON.parse(line) as { time: string; msg: string; level: unknown; pid: unknown; hostname: unknown; service: unknown };
        lines.push({ at: Date.parse(time) - spawnedAt, msg, extra: JSON.stringify(rest).slice(0, 160) });
        if (msg.startsWith('MONGODB_URI not set')) started.cpuAtEngineReady = threadCpu(proc.pid!);
      } catch {
        lines.push({ at: Date.now() - spawnedAt, msg: line, extra: '' });
      }
    }
  });
  proc.stderr!.setEncoding('utf8').on('data', (chunk: string) => process.stderr.write(chunk));
  return started;
}

async function untilReady(g: Started): Promise<number> {
  for (;;) {
    if (g.proc.exitCode !== null) throw new Error(`gateway exited with ${g.proc.exitCode}`);
    try {
      const res = await fetch(`${g.url}/readyz`);
      await res.arrayBuffer();
      if (res.status === 200) return Date.now() - g.spawnedAt;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function stop(g: Started): Promise<void> {
  g.proc.kill('SIGTERM');
  await g.exited;
}

/**
 * CPU ms (user + system) of each thread of `pid`: the main thread as `main`, the busiest other one (the
 * engine's worker, during a start) as `worker`, the rest summed by thread name (V8's and libuv's helpers
 * are all called `node`).
 */
function threadCpu(pid: number): Record<string, number> {
  const tick = 1000 / 100; // USER_HZ
  const threads: Array<{ name: string; ms: number }> = [];
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = tid === String(pid) ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      threads.push({ name, ms: (Number(f[11]) + Number(f[12])) * tick });
    } catch {
      // the thread ended meanwhile
    }
  }
  const others = threads.filter((t) => t.name !== 'main').sort((a, b) => b.ms - a.ms);
  if (others[0]) others[0].name = 'worker';
  const out: Record<string, number> = {};
  for (const t of threads) out[t.name] = (out[t.name] ?? 0) + t.ms;
  return out;
}

async function prepare(dist: string): Promise<Probe> {
  const file = `${dataDir}.probe.json`;
  if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8')) as Probe;
  console.log('first start on this directory (not timed): creating an account and a payment');
  const g = await startGateway(dist, []);
  try {
    await untilReady(g);
    const acct = (await (await fetch(`${g.url}/v1/sandbox/accounts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'restart-probe' }) })).json()) as { sk: string };
    const res = await fetch(`${g.url}/v1/payment_intents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${acct.sk}`, 'idempotency-key': `restart-probe-${Date.now()}` },
      body: JSON.stringify({ amount: 1000, currency: 'AOA', payment_method: 'multicaixa_reference' }),
    });
    const pi = (await res.json()) as { id: string };
    if (res.status !== 201) throw new Error(`POST /v1/payment_intents: ${res.status} ${JSON.stringify(pi)}`);
    const probe = { sk: acct.sk, paymentId: pi.id };
    fs.writeFileSync(file, JSON.stringify(probe));
    return probe;
  } finally {
    await stop(g);
  }
}

async function main(): Promise<void> {
  const dist = await buildPrivate();
  const probe = await prepare(dist);
  const profileDir = path.join(TMP, 'profiles/restart');
  const extra = process.env.CPU_PROFILE === '1' ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  for (let run = 1; run <= RUNS; run++) {
    const load = os.loadavg()[0]!.toFixed(2);
    const g = await startGateway(dist, extra);
    // Every 100 ms until served: the CPU each thread used in that slice, to see who works when.
    const timeline: string[] = [];
    let last = threadCpu(g.proc.pid!);
    const sampler = setInterval(() => {
      const now = threadCpu(g.proc.pid!);
      timeline.push(`${String(Date.now() - g.spawnedAt).padStart(5)} ms: ${Object.entries(now).map(([k, v]) => `${k} +${v - (last[k] ?? 0)}`).join(', ')}`);
      last = now;
    }, 100);
    const readyAt = await untilReady(g).finally(() => clearInterval(sampler));
    const res = await fetch(`${g.url}/v1/payment_intents/${probe.paymentId}`, { headers: { authorization: `Bearer ${probe.sk}` } });
    await res.arrayBuffer();
    const servedAt = Date.now() - g.spawnedAt;
    if (res.status !== 200) throw new Error(`GET the probe's payment: ${res.status}`);
    const cpu = threadCpu(g.proc.pid!);
    // The log lines of the start have been written by now; let the pipe deliver them.
    await new Promise((r) => setTimeout(r, 50));
    console.log(`\nrun ${run} (load ${load}): /readyz ${readyAt} ms, payment served ${servedAt} ms`);
    for (const l of g.lines) console.log(`  ${String(l.at).padStart(5)} ms  ${l.msg.slice(0, 90)}  ${l.extra === '{}' ? '' : l.extra}`);
    const total = Object.values(cpu).reduce((a, b) => a + b, 0);
    const threads = Object.entries(cpu).filter(([, ms]) => ms >= 20).map(([name, ms]) => `${name} ${ms}`).join(', ');
    console.log(`  CPU at served: ${total} ms (${threads})`);
    const ready = g.cpuAtEngineReady;
    if (ready) console.log(`  CPU from the engine ready to served: ${Object.entries(cpu).map(([k, v]) => `${k} +${v - (ready[k] ?? 0)}`).join(', ')}`);
    if (process.env.TIMELINE === '1') for (const line of timeline) console.log(`    ${line}`);
    await stop(g);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
