/**
 * Embedded database benchmark (`npm run bench:db`).
 *
 * Starts the engine in its own child process (the standalone CLI, memory mode and with a data
 * directory), connects mongoose from this process and measures, at concurrency 16:
 *   insertOne          Model.insertOne, building a 100k-document collection
 *   findById           random _id lookups over those documents (hydrated, then .lean())
 *   findOneAndUpdate   $inc on a random document found by a unique key
 * Prints ops/s with p50/p99 latencies.
 *
 * Env: BENCH_DOCS (100000), BENCH_FINDS (50000), BENCH_UPDATES (50000), BENCH_CONCURRENCY (16),
 *      BENCH_MODES ("memory,disk"),
 *      BENCH_ENGINE_NODE_ARGS (extra node flags for the engine process, e.g. --cpu-prof).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import mongoose from 'mongoose';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DOCS = Number(process.env.BENCH_DOCS ?? 100_000);
const FINDS = Number(process.env.BENCH_FINDS ?? 50_000);
const UPDATES = Number(process.env.BENCH_UPDATES ?? 50_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const MODES = (process.env.BENCH_MODES ?? 'memory,disk').split(',').map((s) => s.trim());

interface Result {
  name: string;
  ops: number;
  seconds: number;
  p50: number;
  p99: number;
  /** CPU time the engine process spent per operation (from /proc), in microseconds. */
  engineUs?: number;
  /** CPU time this (client) process spent per operation, in microseconds. */
  clientUs: number;
}

/** utime+stime of a process in microseconds (Linux /proc; undefined elsewhere). */
function processCpuUs(pid: number | undefined): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100; // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}

function startEngine(dataDir: string | undefined): Promise<{ uri: string; child: ChildProcess }> {
  // BENCH_ENGINE_NODE_ARGS e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the engine.
  const nodeArgs = (process.env.BENCH_ENGINE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join(root, 'src/db/embedded/cli.ts')], {
    cwd: root,
    env: { ...process.env, DB_PORT: '0', DATA_DIR: dataDir ?? '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`engine exited early (${code})`)));
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /^MONGODB_URI=(.+)$/.exec(line);
      if (m) resolve({ uri: m[1]!, child });
    });
  });
}

async function stopEngine(child: ChildProcess): Promise<void> {
  child.removeAllListeners('exit'); // drop the "exited early" rejection first
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  await exited;
}

/** Runs `total` operations with `CONCURRENCY` workers, timing each one. */
async function run(name: string, total: number, enginePid: number | undefined, op: (i: number) => Promise<unknown>): Promise<Result> {
  const lat = new Float64Array(total);
  let next = 0;
  const engineCpu0 = processCpuUs(enginePid);
  const clientCpu0 = process.cpuUsage();
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (;;) {
        const i = next++;
        if (i >= total) return;
        const t0 = process.hrtime.bigint();
        await op(i);
        lat[i] = Number(process.hrtime.bigint() - t0) / 1e6;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const engineCpu1 = processCpuUs(enginePid);
  const client = process.cpuUsage(clientCpu0);
  lat.sort();
  return {
    name,
    ops: total,
    seconds,
    p50: lat[Math.floor(total * 0.5)]!,
    p99: lat[Math.floor(total * 0.99)]!,
    engineUs: engineCpu0 !== undefined && engineCpu1 !== undefined ? (engineCpu1 - engineCpu0) / total : undefined,
    clientUs: (client.user + client.system) / total,
  };
}

interface BenchDoc {
  key: string;
  n: number;
  owner: string;
  status: string;
  createdAt: Date;
}

async function benchMode(mode: string): Promise<Result[]> {
  const dataDir = mode === 'disk' ? fs.mkdtempSync(path.join(os.tmpdir(), 'bench-db-')) : undefined;
  const { uri, child } = await startEngine(dataDir);
  const conn = await mongoose.createConnection(uri, { dbName: 'bench', maxPoolSize: CONCURRENCY * 2 }).asPromise();
  const schema = new mongoose.Schema<BenchDoc>({
    key: { type: String, unique: true },
    n: Number,
    owner: String,
    status: String,
    createdAt: Date,
  });
  const Model = conn.model<BenchDoc>('BenchDoc', schema);
  await Model.init();
  const ids: mongoose.Types.ObjectId[] = new Array(DOCS);
  const results: Result[] = [];
  try {
    results.push(
      await run('insertOne', DOCS, child.pid, async (i) => {
        const doc = await Model.insertOne({ key: `key-${i}`, n: 0, owner: `owner-${i % 1000}`, status: 'new', createdAt: new Date() });
        ids[i] = doc._id;
      }),
    );
    const rnd = (n: number) => Math.floor(Math.random() * n);
    results.push(
      await run('findById', FINDS, child.pid, async () => {
        if (!(await Model.findById(ids[rnd(DOCS)]))) throw new Error('findById missed');
      }),
    );
    results.push(
      await run('findById (lean)', FINDS, child.pid, async () => {
        if (!(await Model.findById(ids[rnd(DOCS)]).lean())) throw new Error('findById missed');
      }),
    );
    results.push(
      await run('findOneAndUpdate (unique key)', UPDATES, child.pid, async () => {
        const d = await Model.findOneAndUpdate({ key: `key-${rnd(DOCS)}` }, { $inc: { n: 1 } }, { returnDocument: 'after' });
        if (!d) throw new Error('findOneAndUpdate missed');
      }),
    );
  } finally {
    await conn.close();
    await stopEngine(child);
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return results;
}

function fmt(r: Result): string {
  const rate = Math.round(r.ops / r.seconds);
  const eng = r.engineUs === undefined ? '    n/a' : r.engineUs.toFixed(0).padStart(7);
  return `| ${r.name.padEnd(30)} | ${String(rate).padStart(7)} | ${r.p50.toFixed(2).padStart(7)} | ${r.p99.toFixed(2).padStart(7)} | ${eng} | ${r.clientUs.toFixed(0).padStart(7)} |`;
}

const cpu = /model name\s*:\s*(.+)/.exec(fs.existsSync('/proc/cpuinfo') ? fs.readFileSync('/proc/cpuinfo', 'utf8') : '')?.[1] ?? os.cpus()[0]?.model ?? 'unknown';
console.log(`machine: ${os.cpus().length} cores, ${cpu}, Node ${process.version}`);
console.log(`docs=${DOCS} finds=${FINDS} updates=${UPDATES} concurrency=${CONCURRENCY} load average at start: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
for (const mode of MODES) {
  const results = await benchMode(mode);
  console.log(`\n${mode === 'disk' ? 'with dataDir (journal + fdatasync)' : 'memory mode'}`);
  console.log('| operation                      |   ops/s | p50 ms  | p99 ms  | engine CPU µs/op | client CPU µs/op |');
  console.log('|--------------------------------|---------|---------|---------|---------|---------|');
  for (const r of results) console.log(fmt(r));
}
console.log(`\nload average at end: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
