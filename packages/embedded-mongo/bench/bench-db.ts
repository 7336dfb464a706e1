/**
 * Embedded database benchmark (`npm run bench:db`).
 *
 * Starts the engine in its own child process (the standalone CLI, memory mode and with a data
 * directory, listening on TCP and on a Unix domain socket), connects mongoose from this process
 * once over each transport (a fresh engine each time) and measures, at concurrency 16:
 *   insertOne          Model.insertOne, building a 100k-document collection
 *   findById           random _id lookups over those documents (hydrated, then .lean())
 *   findOneAndUpdate   $inc on a random document found by a unique key
 * Prints ops/s with p50/p99 latencies.
 *
 * Env: BENCH_DOCS (100000), BENCH_FINDS (50000), BENCH_UPDATES (50000), BENCH_CONCURRENCY (16),
 *      BENCH_MODES ("memory,disk"), BENCH_TRANSPORTS ("tcp,socket"),
 *      BENCH_ENGINE_NODE_ARGS (extra node flags for the engine process, e.g. --cpu-prof),
 *      BENCH_CLIENTS (2): findById is also run from this many client processes at once (the same
 *      16 workers split between them), to show what the engine serves when one client process's
 *      CPU is not the bound; 1 = skip.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import mongoose from 'mongoose';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DOCS = Number(process.env.BENCH_DOCS ?? 100_000);
const FINDS = Number(process.env.BENCH_FINDS ?? 50_000);
const UPDATES = Number(process.env.BENCH_UPDATES ?? 50_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const MODES = (process.env.BENCH_MODES ?? 'memory,disk').split(',').map((s) => s.trim());
const TRANSPORTS = (process.env.BENCH_TRANSPORTS ?? 'tcp,socket').split(',').map((s) => s.trim());
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 2);
const self = fileURLToPath(import.meta.url);

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
  /** The part of clientUs spent in the kernel (syscalls: socket writes, reads, epoll). */
  clientSysUs: number;
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

interface EngineProcess {
  child: ChildProcess;
  /** TCP connection string. */
  uri: string;
  /** Unix domain socket connection string. */
  socketUri: string;
}

function startEngine(dataDir: string | undefined): Promise<EngineProcess> {
  // BENCH_ENGINE_NODE_ARGS e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the engine.
  const nodeArgs = (process.env.BENCH_ENGINE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join(root, 'src/cli.ts')], {
    cwd: root,
    env: { ...process.env, DB_PORT: '0', DATA_DIR: dataDir ?? '', DB_SOCKET: 'auto' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`engine exited early (${code})`)));
    let uri = '';
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /^MONGODB_(SOCKET_)?URI=(.+)$/.exec(line);
      if (m && !m[1]) uri = m[2]!;
      else if (m) resolve({ child, uri, socketUri: m[2]! }); // printed after MONGODB_URI
    });
  });
}

async function stopEngine(child: ChildProcess): Promise<void> {
  child.removeAllListeners('exit'); // drop the "exited early" rejection first
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  await exited;
}

/** Runs `total` operations with `concurrency` workers, timing each one. */
async function run(
  name: string,
  total: number,
  enginePid: number | undefined,
  op: (i: number) => Promise<unknown>,
  concurrency = CONCURRENCY,
): Promise<Result & { lat: Float64Array }> {
  const lat = new Float64Array(total);
  let next = 0;
  const engineCpu0 = processCpuUs(enginePid);
  const clientCpu0 = process.cpuUsage();
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
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
  return { lat, ...summarize(name, lat, seconds, engineCpu0, engineCpu1, client.user + client.system, client.system) };
}

/** Sorts `lat` (ms per operation) in place and derives the table row. CPU figures are totals in µs. */
function summarize(
  name: string,
  lat: Float64Array,
  seconds: number,
  engineCpu0: number | undefined,
  engineCpu1: number | undefined,
  clientCpuUs: number,
  clientSysUs: number,
): Result {
  lat.sort();
  const n = lat.length;
  return {
    name,
    ops: n,
    seconds,
    p50: lat[Math.floor(n * 0.5)]!,
    p99: lat[Math.floor(n * 0.99)]!,
    engineUs: engineCpu0 !== undefined && engineCpu1 !== undefined ? (engineCpu1 - engineCpu0) / n : undefined,
    clientUs: clientCpuUs / n,
    clientSysUs: clientSysUs / n,
  };
}

interface BenchDoc {
  key: string;
  n: number;
  owner: string;
  status: string;
  createdAt: Date;
}

const benchSchema = () =>
  new mongoose.Schema<BenchDoc>({
    key: { type: String, unique: true },
    n: Number,
    owner: String,
    status: String,
    createdAt: Date,
  });

const rnd = (n: number) => Math.floor(Math.random() * n);

/**
 * findById from CLIENTS processes at once (this script again, BENCH_ROLE=client), the workers
 * split between them. Each loads the ids, says READY, starts on GO and reports its latencies and
 * CPU; the rate is all operations over the time from GO to the last report.
 */
async function runInClients(name: string, total: number, enginePid: number | undefined, uri: string): Promise<Result> {
  const ops = Math.ceil(total / CLIENTS);
  const workers = Math.max(1, Math.round(CONCURRENCY / CLIENTS));
  const children = Array.from({ length: CLIENTS }, () =>
    spawn(process.execPath, ['--import', 'tsx', self], {
      cwd: root,
      env: { ...process.env, BENCH_ROLE: 'client', BENCH_URI: uri, BENCH_CLIENT_OPS: String(ops), BENCH_CLIENT_WORKERS: String(workers) },
      stdio: ['pipe', 'pipe', 'inherit'],
    }),
  );
  const lines = children.map((c) => readline.createInterface({ input: c.stdout! }));
  const nextLine = (i: number, prefix: string) =>
    new Promise<string>((resolve, reject) => {
      children[i]!.once('exit', (code) => reject(new Error(`bench client exited (${code})`)));
      lines[i]!.on('line', (l) => l.startsWith(prefix) && resolve(l.slice(prefix.length)));
    });
  await Promise.all(children.map((_, i) => nextLine(i, 'READY')));
  const reports = children.map((_, i) => nextLine(i, 'RESULT '));
  const engineCpu0 = processCpuUs(enginePid);
  const started = process.hrtime.bigint();
  for (const c of children) c.stdin!.write('GO\n');
  const results = (await Promise.all(reports)).map((r) => JSON.parse(r) as { cpuUs: number; sysUs: number; lat: string });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const engineCpu1 = processCpuUs(enginePid);
  const lat = Float64Array.from(results.flatMap((r) => [...new Float64Array(new Uint8Array(Buffer.from(r.lat, 'base64')).buffer)]));
  const sum = (f: (r: (typeof results)[number]) => number) => results.reduce((a, r) => a + f(r), 0);
  return summarize(name, lat, seconds, engineCpu0, engineCpu1, sum((r) => r.cpuUs), sum((r) => r.sysUs));
}

/** The BENCH_ROLE=client side of runInClients. */
async function clientMain(): Promise<void> {
  const ops = Number(process.env.BENCH_CLIENT_OPS);
  const workers = Number(process.env.BENCH_CLIENT_WORKERS);
  const conn = await mongoose.createConnection(process.env.BENCH_URI!, { dbName: 'bench', maxPoolSize: workers * 2 }).asPromise();
  const Model = conn.model<BenchDoc>('BenchDoc', benchSchema());
  const ids = (await Model.find({}, { _id: 1 }).lean()).map((d) => d._id);
  const findOne = async () => {
    if (!(await Model.findById(ids[rnd(ids.length)]))) throw new Error('findById missed');
  };
  // Warm up (JIT, connection pool), as the single-process phases are by the ones before them.
  await run('warm-up', 3000, undefined, findOne, workers);
  process.stdout.write('READY\n');
  await new Promise<void>((resolve) => readline.createInterface({ input: process.stdin }).on('line', (l) => l === 'GO' && resolve()));
  const r = await run('findById', ops, undefined, findOne, workers);
  const report = { cpuUs: r.clientUs * ops, sysUs: r.clientSysUs * ops, lat: Buffer.from(r.lat.buffer).toString('base64') };
  process.stdout.write(`RESULT ${JSON.stringify(report)}\n`);
  await conn.close();
}

async function benchMode(mode: string, transport: string): Promise<Result[]> {
  const dataDir = mode === 'disk' ? fs.mkdtempSync(path.join(os.tmpdir(), 'bench-db-')) : undefined;
  const engine = await startEngine(dataDir);
  const { child } = engine;
  const uri = transport === 'socket' ? engine.socketUri : engine.uri;
  const conn = await mongoose.createConnection(uri, { dbName: 'bench', maxPoolSize: CONCURRENCY * 2 }).asPromise();
  const Model = conn.model<BenchDoc>('BenchDoc', benchSchema());
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
    if (CLIENTS > 1) {
      results.push(await runInClients(`findById, ${CLIENTS} client processes`, FINDS, child.pid, uri));
    }
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
  return `| ${r.name.padEnd(30)} | ${String(rate).padStart(7)} | ${r.p50.toFixed(2).padStart(7)} | ${r.p99.toFixed(2).padStart(7)} | ${eng} | ${r.clientUs.toFixed(0).padStart(7)} | ${r.clientSysUs.toFixed(0).padStart(7)} |`;
}

async function main(): Promise<void> {
  const cpu = /model name\s*:\s*(.+)/.exec(fs.existsSync('/proc/cpuinfo') ? fs.readFileSync('/proc/cpuinfo', 'utf8') : '')?.[1] ?? os.cpus()[0]?.model ?? 'unknown';
  console.log(`machine: ${os.cpus().length} cores, ${cpu}, Node ${process.version}`);
  console.log(`docs=${DOCS} finds=${FINDS} updates=${UPDATES} concurrency=${CONCURRENCY} load average at start: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  for (const mode of MODES) {
    for (const transport of TRANSPORTS) {
      const results = await benchMode(mode, transport);
      console.log(`\n${mode === 'disk' ? 'with dataDir (journal + fdatasync)' : 'memory mode'}, ${transport === 'socket' ? 'Unix domain socket' : 'TCP (loopback)'}`);
      console.log('| operation                      |   ops/s | p50 ms  | p99 ms  | engine CPU µs/op | client CPU µs/op | of which kernel |');
      console.log('|--------------------------------|---------|---------|---------|---------|---------|---------|');
      for (const r of results) console.log(fmt(r));
    }
  }
  console.log(`\nload average at end: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
}

if (process.env.BENCH_ROLE === 'client') await clientMain();
else await main();
