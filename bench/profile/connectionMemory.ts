/**
 * What one live connection costs the gateway, per kind: the gateway as `npm start` runs it (dist/, its
 * node flags), N SSE streams then N graphql-ws subscriptions opened by the fan-out worker
 * (bench/fanout/worker.ts) on reference payments. After each step: RSS, and (CONNMEM_SNAPSHOTS=1) a heap
 * snapshot taken through `--heapsnapshot-signal`, summed by constructor; the classes that grew most per
 * connection are printed (count and bytes per connection), which shows what each connection holds.
 * RSS is read before the snapshots (a snapshot's own malloc stays in the process).
 *
 *   npm run build && npx tsx bench/profile/connectionMemory.ts
 *
 * Knobs: CONNMEM_N (1000 per kind), CONNMEM_PAYMENTS (100), CONNMEM_WORKERS (2), CONNMEM_SNAPSHOTS (1),
 * CONNMEM_NODE_ARGS (extra gateway node flags), CONNMEM_KINDS (sse,ws; also graphqlSse, multipart), CONNMEM_SETTLE_S (4: seconds after
 * the last connection before RSS is read, printed every 2 s), CONNMEM_WARM_S (0: seconds of GET load at 50
 * connections before the first reading, which grows the young generation as serving requests does),
 * CONNMEM_GC=1 (also the heap after a full collection at each step, through the inspector).
 */
import fs from 'node:fs';
import path from 'node:path';
import { createAccount, createReferenceIntent } from '../lib/api';
import { buildOnce, forkTs, freePort, rssBytes, TMP } from '../lib/processes';
import { startDatabase, startGatewayProcess } from '../lib/services';
import { pool, sleep } from '../lib/stats';
import { rotatingPaths, runHttpRow } from '../lib/load';
import type { ParentMessage, SubscriberKind, WorkerMessage } from '../fanout/protocol';
import WebSocket from 'ws';

const N = Number(process.env.CONNMEM_N ?? 1000);
const PAYMENTS = Number(process.env.CONNMEM_PAYMENTS ?? 100);
const WORKERS = Number(process.env.CONNMEM_WORKERS ?? 2);
const SNAPSHOTS = process.env.CONNMEM_SNAPSHOTS !== '0';
const KINDS = (process.env.CONNMEM_KINDS ?? 'sse,ws').split(',') as SubscriberKind[];
const MiB = 2 ** 20;
const SETTLE_S = Number(process.env.CONNMEM_SETTLE_S ?? 4);
const WARM_S = Number(process.env.CONNMEM_WARM_S ?? 0);
const SNAP_DIR = path.join(TMP, 'connmem');

type ClassSizes = Map<string, { count: number; bytes: number }>;

/** Sums a .heapsnapshot's nodes by constructor name (self sizes). */
function summarize(file: string): ClassSizes {
  const snap = JSON.parse(fs.readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const iType = fields.indexOf('type');
  const iName = fields.indexOf('name');
  const iSize = fields.indexOf('self_size');
  const out: ClassSizes = new Map();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + iType]!]!;
    const name = type === 'object' || type === 'closure' ? `${type === 'closure' ? 'closure ' : ''}${snap.strings[snap.nodes[i + iName]!]}` : `(${type})`;
    const e = out.get(name) ?? { count: 0, bytes: 0 };
    e.count++;
    e.bytes += snap.nodes[i + iSize]!;
    out.set(name, e);
  }
  return out;
}

async function snapshot(pid: number, label: string): Promise<ClassSizes | null> {
  if (!SNAPSHOTS) return null;
  const before = new Set(fs.readdirSync(SNAP_DIR));
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 600; i++) {
    await sleep(500);
    const fresh = fs.readdirSync(SNAP_DIR).filter((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
    if (fresh.length > 0) {
      const file = path.join(SNAP_DIR, fresh[0]!);
      // Streamed out while the process writes it: complete once it ends the JSON and parses.
      for (let tries = 0; tries < 600; tries++) {
        await sleep(1000);
        try {
          const sizes = summarize(file);
          fs.renameSync(file, path.join(SNAP_DIR, `${label}.heapsnapshot`));
          return sizes;
        } catch {
          // not complete yet
        }
      }
      throw new Error(`heap snapshot ${file} never completed`);
    }
  }
  throw new Error('no heap snapshot written');
}

function printGrowth(label: string, a: ClassSizes, b: ClassSizes, n: number): void {
  const rows = [...b].map(([name, v]) => {
    const old = a.get(name) ?? { count: 0, bytes: 0 };
    return { name, count: (v.count - old.count) / n, bytes: (v.bytes - old.bytes) / n };
  });
  rows.sort((x, y) => y.bytes - x.bytes);
  const total = rows.reduce((s, r) => s + r.bytes, 0);
  console.log(`\n${label}: JS heap growth per connection ${total.toFixed(0)} B; top classes (objects, bytes per connection):`);
  for (const r of rows.slice(0, 30)) console.log(`  ${r.bytes.toFixed(0).padStart(7)} B  ${r.count.toFixed(2).padStart(6)}  ${r.name.slice(0, 90)}`);
}

/** The gateway's main isolate through the inspector: V8's heap spaces (committed MiB) and process.memoryUsage(). */
async function openInspector(port: number): Promise<(gc: boolean) => Promise<string>> {
  const list = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
  const ws = new WebSocket(list[0]!.webSocketDebuggerUrl, { perMessageDeflate: false });
  await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
  let nextId = 1;
  const pending = new Map<number, (m: any) => void>();
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString());
    if (m.id !== undefined) pending.get(m.id)?.(m);
  });
  const send = (method: string, params: object = {}) =>
    new Promise<any>((resolve) => {
      const id = nextId++;
      pending.set(id, (m) => resolve(m.result));
      ws.send(JSON.stringify({ id, method, params }));
    });
  const expression = `JSON.stringify({ spaces: require('v8').getHeapSpaceStatistics().map((s) => [s.space_name, s.space_size, s.space_used_size]), mem: process.memoryUsage() })`;
  return async (gc) => {
    if (gc) {
      await send('HeapProfiler.enable');
      await send('HeapProfiler.collectGarbage');
    }
    const r = await send('Runtime.evaluate', { expression, includeCommandLineAPI: true, returnByValue: true });
    const v = JSON.parse(r.result.value) as { spaces: Array<[string, number, number]>; mem: NodeJS.MemoryUsage };
    const f = (b: number) => (b / MiB).toFixed(1);
    const spaces = v.spaces.filter(([, size]) => size > MiB).map(([n, size, used]) => `${n.replace('_space', '')} ${f(size)}/${f(used)}`).join(', ');
    return `${gc ? 'after GC' : 'as found'}: rss ${f(v.mem.rss)}, heap committed/used ${f(v.mem.heapTotal)}/${f(v.mem.heapUsed)} (${spaces}), external ${f(v.mem.external)}, arrayBuffers ${f(v.mem.arrayBuffers)}`;
  };
}

async function main(): Promise<void> {
  fs.mkdirSync(SNAP_DIR, { recursive: true });
  for (const f of fs.readdirSync(SNAP_DIR)) fs.rmSync(path.join(SNAP_DIR, f));
  buildOnce();
  const db = await startDatabase({ dataDir: '', profile: false, compiled: true });
  const caps = String(N * 2);
  const inspectPort = await freePort();
  const gw = await startGatewayProcess({
    mongodbUri: db.url,
    profile: false,
    compiled: true,
    name: 'gateway-connmem',
    env: {
      SSE_MAX_STREAMS_PER_KEY: caps,
      SSE_MAX_STREAMS_PER_IP: caps,
      HTTP_MAX_CONNECTIONS_PER_IP: '0', // every connection is from 127.0.0.1
      WS_MAX_CONNECTIONS_PER_KEY: caps,
      WS_MAX_CONNECTIONS_PER_IP: caps,
      WS_MAX_SUBSCRIPTIONS_PER_KEY: caps,
    },
    nodeArgs: [`--inspect=127.0.0.1:${inspectPort}`, ...(SNAPSHOTS ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${SNAP_DIR}`] : []), ...(process.env.CONNMEM_NODE_ARGS ?? '').split(/\s+/).filter(Boolean)],
  });
  const pid = gw.child.pid;
  const probe = await openInspector(inspectPort);
  const workers = Array.from({ length: WORKERS }, () => {
    const proc = forkTs('bench/fanout/worker.ts');
    const inbox: WorkerMessage[] = [];
    const waiting: Array<(m: WorkerMessage) => void> = [];
    proc.on('message', (m: WorkerMessage) => (waiting.length ? waiting.shift()!(m) : inbox.push(m)));
    return {
      proc,
      send: (m: ParentMessage) => proc.send(m),
      next: () => new Promise<WorkerMessage>((r) => (inbox.length ? r(inbox.shift()!) : waiting.push(r))),
    };
  });
  try {
    const account = await createAccount(gw.url, 'connmem');
    const payments = await pool(Array.from({ length: PAYMENTS }, (_, i) => i), 20, async () => (await createReferenceIntent(account.api)).id);
    workers.forEach((w, i) => w.send({ type: 'init', gatewayUrl: gw.url, sk: account.sk, payments: payments.filter((_, j) => j % WORKERS === i) }));
    await Promise.all(workers.map((w) => w.next()));
    if (WARM_S > 0) {
      console.log(`RSS idle ${(rssBytes(pid) / MiB).toFixed(1)} MiB; ${await probe(false)}`);
      const auth = { authorization: `Bearer ${account.sk}` };
      await runHttpRow({ url: gw.url, connections: 50, durationS: WARM_S, warmupS: 0, requests: [rotatingPaths(payments.map((id) => `/v1/payment_intents/${id}`), auth)] });
    }
    await sleep(3000);
    let rss = rssBytes(pid);
    let snap = await snapshot(pid, 'before');
    console.log(`gateway ${pid}: RSS before ${(rss / MiB).toFixed(1)} MiB`);
    console.log(`  ${await probe(false)}`);
    for (const kind of KINDS) {
      workers.forEach((w) => w.send({ type: 'connect', kind, perPayment: Math.round(N / PAYMENTS), parallel: 32 }));
      const replies = await Promise.all(workers.map((w) => w.next()));
      const open = replies.reduce((n, r) => n + (r.type === 'connected' ? r.open : 0), 0);
      // RSS over the following seconds: V8's memory reducer gives back the young generation grown by
      // the burst only once the allocation rate has stayed low for a while.
      const trail: string[] = [];
      for (let t = 0; t < SETTLE_S; t += 2) {
        await sleep(2000);
        trail.push(`${t + 2} s ${(rssBytes(pid) / MiB).toFixed(0)}`);
      }
      console.log(`${kind}: RSS after the last connection, MiB: ${trail.join(', ')}`);
      const after = rssBytes(pid);
      console.log(`${kind}: ${open} open; RSS ${(after / MiB).toFixed(1)} MiB, +${(((after - rss) / open) * 1000 / MiB).toFixed(1)} MiB per 1,000`);
      console.log(`  ${await probe(false)}`);
      rss = after;
      if (!SNAPSHOTS && process.env.CONNMEM_GC === '1') {
        // A full collection shrinks the young generation: the next step's figure then starts from it.
        console.log(`  ${await probe(true)}`);
        rss = rssBytes(pid);
      }
      const next = await snapshot(pid, `after-${kind}`);
      if (snap && next) printGrowth(kind, snap, next, open);
      if (next) rss = rssBytes(pid);
      snap = next;
    }
  } finally {
    for (const w of workers) w.send({ type: 'close' });
    await sleep(500);
    await gw.stop();
    await db.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
