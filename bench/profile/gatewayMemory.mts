/**
 * Where the compiled gateway's RSS goes as one account's stored payments grow, per isolate: the gateway as
 * `npm start` runs it (dist/main.js with its environment and node flags, DATA_DIR set, the engine in a worker
 * thread), grown by 16 concurrent POSTs (three in four reference, one in four express 923000001, as
 * bench:scale), measured at each step after the express payments settled and a forced full GC of both
 * isolates. The probe reaches both isolates through the inspector (`--inspect` on a free port; the worker
 * through the NodeWorker domain), so the gateway's code carries no debug hook. Per step it prints RSS, each
 * isolate's heap used / committed and external / array buffers, and /proc's anonymous memory, as found
 * (what bench:scale's RSS sees) and after the GC, and the anonymous memory by mapping size (malloc arenas vs
 * V8 pages: a growing "rest" that malloc holds shows there); then the
 * growth per 1,000 payments split into: main heap live, main heap slack (committed - used), worker heap
 * live, worker heap slack, external + array buffers (both isolates), and the rest (malloc, code, stacks).
 *
 *   npm run build && npx tsx bench/profile/gatewayMemory.mts
 *
 * Knobs: MEMPROBE_STEPS (1000,5000,20000), MEMPROBE_CONCURRENCY (16), MEMPROBE_NODE_ARGS (extra node flags
 * for the gateway, e.g. "--max-semi-space-size=16", to A/B a V8 setting), MEMPROBE_ENV (extra gateway env,
 * "K=V,K=V", npm start's MALLOC_ARENA_MAX=2 by default, MALLOC_ARENA_MAX=16 is glibc's default on 2 cores), MEMPROBE_CLASSES=1 (also sum the main isolate's heap snapshot by constructor at each step and
 * print the 25 classes that grew most: slow, and the snapshot's own malloc stays in the process, so that
 * run's RSS and "rest" are not comparable with a run without it).
 * MEMPROBE_MALLOC=1 (needs gdb): also glibc's own account at each step, as found and after the GC
 * (malloc_info through gdb, which stops the process for a moment): per arena the bytes it has from the
 * system and how many of them are free chunks it keeps, and after the last step the RSS that
 * malloc_trim(0) gives back (free memory malloc held, not memory in use).
 * Also prints the process's CPU ms per payment created at each step (/proc), to A/B a setting's cost.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { Api } from '../lib/api';
import { buildOnce, cpuMs, freePort, rssBytes } from '../lib/processes';
import { startGatewayProcess } from '../lib/services';

const STEPS = (process.env.MEMPROBE_STEPS ?? '1000,5000,20000').split(',').map(Number);
const CONCURRENCY = Number(process.env.MEMPROBE_CONCURRENCY ?? 16);
const CLASSES = process.env.MEMPROBE_CLASSES === '1';
const MALLOC = process.env.MEMPROBE_MALLOC === '1';
const MiB = 2 ** 20;

/** A Chrome DevTools Protocol session on the gateway's main thread, with its engine worker reachable too. */
class Inspector {
  private nextId = 1;
  private pending = new Map<number, (r: any) => void>();
  private workerSession?: string;
  private workerPending = new Map<number, (r: any) => void>();
  private chunks: string[] = [];
  private workerAttached!: Promise<void>;
  constructor(private ws: WebSocket) {
    let attached!: () => void;
    this.workerAttached = new Promise((r) => (attached = r));
    ws.on('message', (data) => {
      const m = JSON.parse(String(data));
      if (m.id !== undefined) this.pending.get(m.id)?.(m);
      else if (m.method === 'HeapProfiler.addHeapSnapshotChunk') this.chunks.push(m.params.chunk);
      else if (m.method === 'NodeWorker.attachedToWorker') {
        // The engine's worker (a gateway run through tsx also has the module loader's threads).
        if (!String(m.params.workerInfo.url).includes('engine-worker')) return;
        this.workerSession = m.params.sessionId;
        attached();
      } else if (m.method === 'NodeWorker.receivedMessageFromWorker') {
        const r = JSON.parse(m.params.message);
        if (r.id !== undefined) this.workerPending.get(r.id)?.(r);
      }
    });
  }
  static async open(port: number): Promise<Inspector> {
    const list = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
    const ws = new WebSocket(list[0]!.webSocketDebuggerUrl, { perMessageDeflate: false, maxPayload: 2 ** 31 });
    await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
    const insp = new Inspector(ws);
    await insp.send('NodeWorker.enable', { waitForDebuggerOnStart: false });
    await insp.workerAttached;
    return insp;
  }
  send(method: string, params: object = {}): Promise<any> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, (m) => (this.pending.delete(id), m.error ? reject(new Error(`${method}: ${m.error.message}`)) : resolve(m.result)));
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }
  sendWorker(method: string, params: object = {}): Promise<any> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.workerPending.set(id, (m) => (this.workerPending.delete(id), m.error ? reject(new Error(`worker ${method}: ${m.error.message}`)) : resolve(m.result)));
      void this.send('NodeWorker.sendMessageToWorker', { sessionId: this.workerSession, message: JSON.stringify({ id, method, params }) });
    });
  }
  /** process.memoryUsage() of one isolate (its own heap, process-wide RSS), after two full collections. */
  async usage(worker: boolean, gc: boolean): Promise<{ heapUsed: number; heapTotal: number; external: number; arrayBuffers: number }> {
    const call = (m: string, p?: object) => (worker ? this.sendWorker(m, p) : this.send(m, p));
    if (gc) {
      await call('HeapProfiler.enable');
      await call('HeapProfiler.collectGarbage');
      await call('HeapProfiler.collectGarbage');
    }
    const r = await call('Runtime.evaluate', { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true });
    return JSON.parse(r.result.value);
  }
  /** The main isolate's heap snapshot, summed by node type and constructor name: self bytes and counts. */
  async classes(): Promise<Map<string, { size: number; count: number }>> {
    this.chunks = [];
    await this.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    const snap = JSON.parse(this.chunks.join(''));
    this.chunks = [];
    const f = snap.snapshot.meta.node_fields as string[];
    const types = snap.snapshot.meta.node_types[0] as string[];
    const [ti, ni, si] = ['type', 'name', 'self_size'].map((k) => f.indexOf(k));
    const out = new Map<string, { size: number; count: number }>();
    for (let i = 0; i < snap.nodes.length; i += f.length) {
      const type = types[snap.nodes[i + ti!]]!;
      const name = type === 'object' || type === 'native' || type === 'closure' ? String(snap.strings[snap.nodes[i + ni!]]).slice(0, 60) : '';
      const key = `${type}${name ? `:${name}` : ''}`;
      const e = out.get(key) ?? { size: 0, count: 0 };
      e.size += snap.nodes[i + si!];
      e.count++;
      out.set(key, e);
    }
    return out;
  }
}

/**
 * Resident anonymous memory by mapping size (from /proc/<pid>/smaps): glibc's thread arenas are 64 MiB
 * reservations, V8's pages 256 KiB (code and large objects: other sizes), [heap] the main arena.
 */
function anonByMapping(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  let key = '';
  for (const line of fs.readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ (\d+)\s*(.*)$/.exec(line);
    if (head) {
      const size = parseInt(head[2]!, 16) - parseInt(head[1]!, 16);
      const name = head[4]!;
      key = name === '[heap]' ? '[heap]' : name ? 'file/other' : size === 64 * MiB ? '64 MiB (malloc arena)' : size === 256 * 1024 ? '256 KiB (V8 page)' : size < 64 * MiB ? '< 64 MiB' : '> 64 MiB';
    } else if (line.startsWith('Anonymous:')) out[key] = (out[key] ?? 0) + Number(/(\d+)/.exec(line)![1]) / 1024;
  }
  return out;
}

/** Runs gdb commands in a process (attached for a moment, then let go). */
function gdb(pid: number, ...commands: string[]): void {
  execFileSync('gdb', ['-p', String(pid), '-batch', ...commands.flatMap((c) => ['-ex', c])], { stdio: 'ignore', timeout: 60_000 });
}

/**
 * glibc malloc's account of itself (malloc_info, written by the process through gdb): per arena
 * (0: the main one, [heap]; then the threads'), MiB taken from the system and MiB of it in free chunks.
 */
function mallocInfo(pid: number): string {
  const file = path.join(os.tmpdir(), `memprobe-malloc-${pid}.xml`);
  gdb(pid, `set $f = (void*)fopen("${file}", "w")`, 'call (int)malloc_info(0, $f)', 'call (int)fclose($f)');
  const xml = fs.readFileSync(file, 'utf8');
  fs.rmSync(file);
  const f = (b: number) => (b / MiB).toFixed(1);
  const arenas = [...xml.matchAll(/<heap nr="(\d+)">([\s\S]*?)<\/heap>/g)].map(([, nr, body]) => {
    const free = [...body!.matchAll(/<total type="(?:fast|rest)" count="\d+" size="(\d+)"\/>/g)].reduce((a, m) => a + Number(m[1]), 0);
    const system = Number(/<system type="current" size="(\d+)"\/>/.exec(body!)![1]);
    return `#${nr} ${f(system)} (free ${f(free)})`;
  });
  const mmap = /<total type="mmap" count="(\d+)" size="(\d+)"\/>\s*<system/.exec(xml);
  return `${arenas.join(', ')}, mmapped ${mmap ? `${f(Number(mmap[2]))} in ${mmap[1]}` : '?'}`;
}

/** Anonymous resident memory of a process (heaps, malloc, slabs), from /proc/<pid>/smaps_rollup. */
function anonBytes(pid: number): number {
  const m = /Anonymous:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-memprobe-'));
buildOnce();
const inspectPort = await freePort();
const extraEnv = Object.fromEntries((process.env.MEMPROBE_ENV ?? '').split(',').filter(Boolean).map((kv) => kv.split('=') as [string, string]));
const gw = await startGatewayProcess({
  mongodbUri: '',
  profile: false,
  compiled: true,
  name: 'memprobe-gateway',
  env: { DATA_DIR: dataDir, ...extraEnv },
  nodeArgs: [`--inspect=127.0.0.1:${inspectPort}`, ...(process.env.MEMPROBE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean)],
});
try {
  const insp = await Inspector.open(inspectPort);
  const acct = await new Api(gw.url).must<{ sk: string }>(201, 'POST', '/v1/sandbox/accounts', { name: 'memprobe' });
  const api = new Api(gw.url, acct.sk);
  let n = 0;
  const grow = async (to: number) => {
    const jobs = [];
    for (let w = 0; w < CONCURRENCY; w++) {
      jobs.push(
        (async () => {
          while (n < to) {
            const i = n++;
            const body = i % 4 === 3 ? { amount: 1000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000001' } } : { amount: 1000, currency: 'AOA', payment_method: 'multicaixa_reference' };
            await api.must(201, 'POST', '/v1/payment_intents', body, { 'idempotency-key': `memprobe-${i}` });
          }
        })(),
      );
    }
    await Promise.all(jobs);
  };
  type Usage = Awaited<ReturnType<Inspector['usage']>>;
  type Row = { step: number; cpuPerPayment: number; rss: number; anon: number; main: Usage; worker: Usage; asFound: { rss: number; main: Usage; worker: Usage } };
  const rows: Row[] = [];
  let prevClasses: Map<string, { size: number; count: number }> | undefined;
  for (const step of STEPS) {
    const t0 = Date.now();
    const cpu0 = cpuMs(gw.child.pid);
    const from = n;
    await grow(step);
    // CPU of the whole process (both threads) per payment created, the timers' and events' work included.
    const cpuPerPayment = (cpuMs(gw.child.pid) - cpu0) / (step - from);
    // The express payments fail at +5 s: let the last ones' timers, events and webhooks settle.
    await new Promise((r) => setTimeout(r, 7_000));
    const f = (b: number) => (b / MiB).toFixed(1);
    console.log(`  CPU ${cpuPerPayment.toFixed(2)} ms per payment while growing`);
    const asFound = { rss: rssBytes(gw.child.pid), main: await insp.usage(false, false), worker: await insp.usage(true, false) };
    console.log(`  as found: RSS ${f(asFound.rss)} | main heap ${f(asFound.main.heapUsed)}/${f(asFound.main.heapTotal)} | worker heap ${f(asFound.worker.heapUsed)}/${f(asFound.worker.heapTotal)} MiB`);
    if (MALLOC) console.log(`  malloc as found (MiB): ${mallocInfo(gw.child.pid)}`);
    const main = await insp.usage(false, true);
    const worker = await insp.usage(true, true);
    // V8 hands the pages a full GC freed back to the system from a background thread: let it.
    await new Promise((r) => setTimeout(r, 2_000));
    const row = { step, cpuPerPayment, rss: rssBytes(gw.child.pid), anon: anonBytes(gw.child.pid), main, worker, asFound };
    rows.push(row);
    console.log(`  anon by mapping (MiB): ${Object.entries(anonByMapping(gw.child.pid)).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ')}`);
    if (MALLOC) console.log(`  malloc after the GC (MiB): ${mallocInfo(gw.child.pid)}`);
    console.log(
      `${step} payments (${((Date.now() - t0) / 1000).toFixed(0)} s, load ${os.loadavg()[0]!.toFixed(1)}): RSS ${f(row.rss)} anon ${f(row.anon)} | main heap ${f(main.heapUsed)}/${f(main.heapTotal)} ext ${f(main.external)} ab ${f(main.arrayBuffers)} | worker heap ${f(worker.heapUsed)}/${f(worker.heapTotal)} ext ${f(worker.external)} ab ${f(worker.arrayBuffers)} MiB`,
    );
    if (CLASSES) {
      const cls = await insp.classes();
      if (prevClasses) {
        const grew = [...cls].map(([k, v]) => ({ k, d: v.size - (prevClasses!.get(k)?.size ?? 0), dc: v.count - (prevClasses!.get(k)?.count ?? 0), size: v.size }));
        grew.sort((a, b) => b.d - a.d);
        for (const g of grew.slice(0, 25)) console.log(`   ${g.k.padEnd(70)} +${(g.d / 1024).toFixed(0).padStart(7)} KiB  +${String(g.dc).padStart(7)} objects  (now ${(g.size / 1024).toFixed(0)} KiB)`);
      }
      prevClasses = cls;
    }
  }
  const a = rows[0]!;
  const b = rows.at(-1)!;
  const per = (x: number, y: number) => (((y - x) / ((b.step - a.step) / 1000)) / MiB).toFixed(2);
  const ext = (r: Row) => r.main.external + r.worker.external; // external includes arrayBuffers
  const rest = (r: Row) => r.rss - r.main.heapTotal - r.worker.heapTotal - ext(r);
  console.log(`\nper 1,000 payments, ${a.step} -> ${b.step}:`);
  console.log(`  RSS as found (before the GC)     ${per(a.asFound.rss, b.asFound.rss)} MiB`);
  console.log(`    main heap committed as found   ${per(a.asFound.main.heapTotal, b.asFound.main.heapTotal)}`);
  console.log(`    worker heap committed as found ${per(a.asFound.worker.heapTotal, b.asFound.worker.heapTotal)}`);
  console.log(`  RSS after a full GC              ${per(a.rss, b.rss)} MiB`);
  console.log(`  main heap live                   ${per(a.main.heapUsed, b.main.heapUsed)}`);
  console.log(`  main heap slack (total - used)   ${per(a.main.heapTotal - a.main.heapUsed, b.main.heapTotal - b.main.heapUsed)}`);
  console.log(`  worker heap live                 ${per(a.worker.heapUsed, b.worker.heapUsed)}`);
  console.log(`  worker heap slack                ${per(a.worker.heapTotal - a.worker.heapUsed, b.worker.heapTotal - b.worker.heapUsed)}`);
  console.log(`  external + array buffers         ${per(ext(a), ext(b))}  (worker ab ${per(a.worker.arrayBuffers, b.worker.arrayBuffers)})`);
  console.log(`  rest (malloc, code, stacks)      ${per(rest(a), rest(b))}`);
  if (MALLOC) {
    const before = rssBytes(gw.child.pid);
    gdb(gw.child.pid, 'call (int)malloc_trim(0)');
    console.log(`  at ${b.step}: malloc_trim(0) gave back ${((before - rssBytes(gw.child.pid)) / MiB).toFixed(1)} MiB of RSS (free memory malloc kept)`);
  }
  console.log(JSON.stringify({ steps: STEPS, loadavg: os.loadavg(), rows }));
} finally {
  await gw.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
process.exit(0);
