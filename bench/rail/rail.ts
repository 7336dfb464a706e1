/**
 * npm run bench:rail — does the express rail keep its +2 s / +5 s under sustained load? Open-loop
 * load: express payments with 923000000 (PROCESSING at +2 s, SUCCEEDED at +5 s) sent on schedule at
 * BENCH_RAIL_RATE per second for BENCH_RAIL_SECONDS, whatever the answers, spread over BENCH_RAIL_ACCOUNTS
 * accounts, each with a webhook endpoint for payment.succeeded pointing at a receiver in this process.
 * Reported: the achieved send rate and POST latency; the lateness of each payment.succeeded webhook
 * against created_at + 5 s (p50/p95/p99/max, how many more than 5 s late, how many never arrived within
 * BENCH_RAIL_DRAIN_S after the last send), and its two parts: the rail's (the updated_at the webhook's
 * body carries, against created_at + 5 s) and the webhook's (arrival against that updated_at); and,
 * from the API, updated_at − created_at of a sample of SUCCEEDED payments; lateness p99 (and its parts)
 * and POST p99 by slice of the run (BENCH_RAIL_SLICE_S, 5 s), and the lateness p99 of the payments
 * created after the first 10 s; and by slice, where the two cores went (cpuBySlice.ts): the share of the
 * time the gateway's HTTP and engine threads were on a core and waiting for one, its other threads' CPU,
 * the machine's idle share. The gateway runs in its own process as
 * `npm start` runs it (dist/main.js: one thread for HTTP and timers; BACKGROUND_THREAD=true moves the
 * timers to a thread of their own), the embedded engine
 * inside it (memory only; BENCH_RAIL_DATA_DIR=1 journals to a fresh data directory, as `npm start` with DATA_DIR does).
 * The load is sent over node:http (bench/lib/leanHttp.ts), not fetch, which took twice the CPU of this
 * machine's two cores that the gateway needs; this process's CPU is reported beside the gateway's.
 *
 * BENCH_RAIL_RUNS=<n> repeats the whole run n times, each in a fresh process of its own with a gateway
 * just started (and a fresh data directory when journaled), then prints each run's p99 and how many were
 * under the target: on a shared 2-core VM one run's p99 swings by 2-3x between identical runs
 * (bench/HISTORY.md), so a verdict needs the spread, not one figure.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Api } from '../lib/api';
import { leanJson } from '../lib/leanHttp';
import { busiestThreads, cpuMs, threadCpuMs, TMP } from '../lib/processes';
import { startDatabase, startGatewayProcess } from '../lib/services';
import { percentile, pool, sleep } from '../lib/stats';
import { sampleCpu } from './cpuBySlice';

const RATE = Number(process.env.BENCH_RAIL_RATE ?? 300);
const SECONDS = Number(process.env.BENCH_RAIL_SECONDS ?? 30);
const ACCOUNTS = Number(process.env.BENCH_RAIL_ACCOUNTS ?? 10);
const DRAIN_S = Number(process.env.BENCH_RAIL_DRAIN_S ?? 30);
/**
 * Seconds of warm-up before the measured load (default 0: a gateway that has just started): the same
 * payments at a third of the rate, not measured, then a pause until their rail is done. A gateway that
 * has served traffic has its hot paths compiled by V8 and its heaps grown; one just started has neither.
 */
const WARMUP_S = Number(process.env.BENCH_RAIL_WARMUP_S ?? 0);
/** Width of the slices of the run that lateness and POST latency are also reported by (BENCH_RAIL_SLICE_S). */
const SLICE_MS = Number(process.env.BENCH_RAIL_SLICE_S ?? 5) * 1000;

/** Values of one measure, all of them and by the slice of the run (from `t0`) they fall in. */
class Sliced {
  readonly all: number[] = [];
  readonly bySlice: number[][] = [];
  constructor(private readonly t0: number) {}
  add(at: number, value: number): void {
    this.all.push(value);
    (this.bySlice[Math.max(0, Math.floor((at - this.t0) / SLICE_MS))] ??= []).push(value);
  }
  p99BySlice(): number[] {
    return Array.from(this.bySlice, (slice) => (slice ? percentile(slice, 99) : NaN));
  }
}

/** Connections the gateway opened to the receiver (its webhook agent keeps them alive between bursts). */
let receiverConnections = 0;
/** When each payment.succeeded arrived, and the payment's updated_at it carries (when the rail moved it). */
interface Arrival {
  at: number;
  updatedAt: number;
}

function startReceiver(arrivals: Map<string, Arrival>): Promise<{ url: string; close: () => void }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      try {
        const ev = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; data: { id: string; updated_at: string } };
        if (ev.type === 'payment.succeeded' && !arrivals.has(ev.data.id)) arrivals.set(ev.data.id, { at, updatedAt: Date.parse(ev.data.updated_at) });
      } catch {
        // not an event: ignore
      }
      res.writeHead(200).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.on('connection', () => receiverConnections++);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, close: () => server.close() })));
}

const fmt = (xs: number[]) => `p50 ${percentile(xs, 50).toFixed(0)}, p95 ${percentile(xs, 95).toFixed(0)}, p99 ${percentile(xs, 99).toFixed(0)}, max ${(xs.length ? Math.max(...xs) : NaN).toFixed(0)}`;

async function main(): Promise<void> {
  const dataDir = process.env.BENCH_RAIL_DATA_DIR === '1' ? fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-rail-')) : undefined;
  // BENCH_RAIL_LAYOUT=separate: the engine in its own process (`npm run db`), the gateway over MONGODB_URI.
  const separate = process.env.BENCH_RAIL_LAYOUT === 'separate';
  const db = separate ? await startDatabase({ dataDir: dataDir ?? '', profile: process.env.BENCH_RAIL_PROFILE === '1' }) : undefined;
  const gw = await startGatewayProcess({ mongodbUri: db?.url ?? '', profile: process.env.BENCH_RAIL_PROFILE === '1', compiled: true, name: 'rail-gateway', env: { DATA_DIR: dataDir && !separate ? dataDir : '' } });
  const arrivals = new Map<string, Arrival>();
  const receiver = await startReceiver(arrivals);
  const apis: Api[] = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    const a = await new Api(gw.url).must<{ sk: string }>(201, 'POST', '/v1/sandbox/accounts', { name: `rail ${i}` });
    const api = new Api(gw.url, a.sk);
    await api.must(201, 'POST', '/v1/webhook_endpoints', { url: receiver.url, events: ['payment.succeeded'] });
    apis.push(api);
  }
  if (WARMUP_S > 0) {
    const warmAgent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
    const warmUrl = new URL(`${gw.url}/v1/payment_intents`);
    const sends: Array<Promise<unknown>> = [];
    const warmRate = Math.max(1, Math.round(RATE / 3));
    const w0 = Date.now();
    for (let i = 0; i < warmRate * WARMUP_S; i++) {
      while (Date.now() - w0 < (i / warmRate) * 1000) await sleep(2);
      const api = apis[i % ACCOUNTS]!;
      const body = { amount: 1000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000000' } };
      sends.push(leanJson(warmAgent, warmUrl, 'POST', body, { ...api.authHeaders, 'idempotency-key': `warm-${w0}-${i}` }).catch(() => undefined));
    }
    await Promise.all(sends);
    warmAgent.destroy();
    // Their rail (+5 s) and webhooks done, so that the measured load starts from a quiet gateway.
    await sleep(6_000);
    arrivals.clear();
  }
  const total = RATE * SECONDS;
  const created = new Map<string, { createdAt: number; api: Api }>();
  let errors = 0;
  /** Non-201 answers by status, and failed requests by error, for the report. */
  const statuses = new Map<number | string, number>();
  const inFlight = new Set<Promise<void>>();
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const postUrl = new URL(`${gw.url}/v1/payment_intents`);
  const cpu0 = cpuMs(gw.child.pid);
  const threads0 = threadCpuMs(gw.child.pid);
  const dbCpu0 = db ? cpuMs(db.child.pid) : 0;
  const benchCpu0 = process.cpuUsage();
  const t0 = Date.now() + 200;
  const postMs = new Sliced(t0);
  const cpuSampler = sampleCpu(gw.child.pid, t0, SLICE_MS);
  let sent = 0;
  // Open loop: every tick sends whatever is due by now, without waiting for earlier answers.
  while (sent < total) {
    const due = Math.min(total, Math.floor(((Date.now() - t0) / 1000) * RATE));
    for (; sent < due; sent++) {
      const i = sent;
      const api = apis[i % ACCOUNTS]!;
      const start = Date.now();
      const p = leanJson<{ id: string; created_at: string }>(
        agent,
        postUrl,
        'POST',
        { amount: 1000 + (i % 5000), currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000000' } },
        { ...api.authHeaders, 'idempotency-key': `rail-${t0}-${i}` },
      )
        .then((res) => {
          postMs.add(start, Date.now() - start);
          if (res.status !== 201) {
            errors++;
            statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          }
          else created.set(res.body.id, { createdAt: Date.parse(res.body.created_at), api });
        })
        .catch((e: unknown) => {
          errors++;
          const key = e instanceof Error ? e.message.slice(0, 40) : 'error';
          statuses.set(key, (statuses.get(key) ?? 0) + 1);
        })
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    await sleep(2);
  }
  const sendSeconds = (Date.now() - t0) / 1000;
  await Promise.all(inFlight);
  agent.destroy();
  const drainUntil = Date.now() + DRAIN_S * 1000;
  while (Date.now() < drainUntil && [...created.keys()].some((id) => !arrivals.has(id))) await sleep(200);
  const cpuBySlice = cpuSampler.stop();
  const gatewayCpuS = (cpuMs(gw.child.pid) - cpu0) / 1000;
  const threads = busiestThreads(threads0, threadCpuMs(gw.child.pid), gw.child.pid);
  const dbCpuS = db ? (cpuMs(db.child.pid) - dbCpu0) / 1000 : 0;
  const benchCpu = process.cpuUsage(benchCpu0);
  // The load generator and the webhook receiver (this process) share the machine with the gateway.
  const benchCpuS = (benchCpu.user + benchCpu.system) / 1e6;

  // Lateness by when the payment was created, a slice of the run at a time: a backlog that formed while
  // the gateway was cold shows in the first slices, one that grows with time in the last. In two parts:
  // the rail's (updated_at of SUCCEEDED against created_at + 5 s) and the webhook's (arrival against that
  // updated_at: storing the event, writing the delivery, sending it).
  const late = new Sliced(t0);
  const railLate = new Sliced(t0);
  const deliveryMs = new Sliced(t0);
  let lost = 0;
  for (const [id, c] of created) {
    const arrival = arrivals.get(id);
    if (arrival === undefined) lost++;
    else {
      late.add(c.createdAt, arrival.at - (c.createdAt + 5_000));
      railLate.add(c.createdAt, arrival.updatedAt - (c.createdAt + 5_000));
      deliveryMs.add(c.createdAt, arrival.at - arrival.updatedAt);
    }
  }
  // From the API: how long the rail took, for a sample of the payments.
  const sample = [...created.entries()].filter((_, i) => i % Math.max(1, Math.floor(created.size / 500)) === 0);
  const took: number[] = [];
  let notFinal = 0;
  await pool(sample, 16, async ([id, c]) => {
    const p = await c.api.must<{ status: string; created_at: string; updated_at: string }>(200, 'GET', `/v1/payment_intents/${id}`);
    if (p.status !== 'SUCCEEDED') notFinal++;
    else took.push(Date.parse(p.updated_at) - Date.parse(p.created_at));
  });
  receiver.close();
  await gw.stop();
  await db?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });

  const result = {
    rate: RATE,
    seconds: SECONDS,
    accounts: ACCOUNTS,
    warmupSeconds: WARMUP_S,
    journaled: dataDir !== undefined,
    layout: separate ? 'engine in its own process' : 'engine in the gateway process',
    achievedRate: total / sendSeconds,
    created: created.size,
    postErrors: errors,
    postMs: { p50: percentile(postMs.all, 50), p99: percentile(postMs.all, 99) },
    lateMs: { p50: percentile(late.all, 50), p95: percentile(late.all, 95), p99: percentile(late.all, 99), max: late.all.length ? Math.max(...late.all) : NaN },
    railLateMs: { p50: percentile(railLate.all, 50), p99: percentile(railLate.all, 99) },
    deliveryMs: { p50: percentile(deliveryMs.all, 50), p99: percentile(deliveryMs.all, 99) },
    moreThan5sLate: late.all.filter((l) => l > 5_000).length,
    lateP99BySlice: late.p99BySlice(),
    postP99BySlice: postMs.p99BySlice(),
    railLateP99BySlice: railLate.p99BySlice(),
    deliveryP99BySlice: deliveryMs.p99BySlice(),
    // The same p99 without the payments created in the first 10 s: a gateway just started compiles its
    // hot paths then (V8), which a gateway that has served traffic has done.
    lateP99After10s: percentile(late.bySlice.slice(Math.ceil(10_000 / SLICE_MS)).flat(), 99),
    lost,
    railMs: { p50: percentile(took, 50), p99: percentile(took, 99), sampled: sample.length, notFinal },
    gatewayCpuS,
    threads,
    cpuBySlice,
    dbCpuS,
    benchCpuS,
    webhookConnections: receiverConnections,
    loadavg: os.loadavg(),
  };
  console.log(
    [
      `express 923000000 at ${RATE}/s for ${SECONDS} s over ${ACCOUNTS} accounts${dataDir ? ' (journaled)' : ''}${WARMUP_S > 0 ? `, after ${WARMUP_S} s of warm-up at ${Math.round(RATE / 3)}/s` : ''}, ${result.layout}: sent at ${result.achievedRate.toFixed(0)}/s, ${created.size} created, ${errors} errors${statuses.size ? ` (${[...statuses].map(([k, v]) => `${k}: ${v}`).join(", ")})` : ""}; POST ms p50 ${result.postMs.p50.toFixed(0)}, p99 ${result.postMs.p99.toFixed(0)}`,
      `payment.succeeded lateness vs created_at + 5 s (ms): ${fmt(late.all)}; ${result.moreThan5sLate} more than 5 s late; ${lost} never arrived within ${DRAIN_S} s; over ${receiverConnections} connections`,
      `of which the rail's (updated_at of SUCCEEDED - created_at - 5 s): p50 ${result.railLateMs.p50.toFixed(0)}, p99 ${result.railLateMs.p99.toFixed(0)}; the webhook's (arrival - updated_at): p50 ${result.deliveryMs.p50.toFixed(0)}, p99 ${result.deliveryMs.p99.toFixed(0)}`,
      `by ${SLICE_MS / 1000} s of the run, p99 (ms): lateness ${result.lateP99BySlice.map((l) => l.toFixed(0)).join(' / ')} (rail ${result.railLateP99BySlice.map((l) => l.toFixed(0)).join(' / ')}, webhook ${result.deliveryP99BySlice.map((l) => l.toFixed(0)).join(' / ')}); POST ${result.postP99BySlice.map((l) => l.toFixed(0)).join(' / ')}; lateness of the payments created after the first 10 s: p99 ${result.lateP99After10s.toFixed(0)}`,
      `by ${SLICE_MS / 1000} s of the run (when spent, not when created), % of the time on a core (and waiting for one): HTTP thread ${pcts(cpuBySlice.http)} (${pcts(cpuBySlice.httpWaiting)}); engine thread ${pcts(cpuBySlice.engine)} (${pcts(cpuBySlice.engineWaiting)}); the gateway's other threads (V8's compiler and GC helpers, libuv's pool) ${pcts(cpuBySlice.others)}; machine idle (% of all cores) ${pcts(cpuBySlice.machineIdle)}`,
      `updated_at - created_at of SUCCEEDED (ms, ${took.length} sampled): p50 ${result.railMs.p50}, p99 ${result.railMs.p99}; ${notFinal} sampled not SUCCEEDED`,
      `gateway CPU ${gatewayCpuS.toFixed(1)} s (${threads})${db ? `, engine process CPU ${dbCpuS.toFixed(1)} s` : ''}; load generator and receiver CPU ${benchCpuS.toFixed(1)} s; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`,
    ].join('\n'),
  );
  fs.mkdirSync(TMP, { recursive: true });
  fs.writeFileSync(path.join(TMP, 'rail.json'), JSON.stringify(result, null, 2));
}

/** Whole percentages by slice; '-' where there is no figure (no schedstat on this kernel). */
const pcts = (xs: number[]): string => xs.map((x) => (Number.isFinite(x) ? x.toFixed(0) : '-')).join(' / ');

/** The p99 lateness the issue's target is checked against (ms). */
const TARGET_P99_MS = 500;
const RUNS = Number(process.env.BENCH_RAIL_RUNS ?? 1);
/** What the repeat mode reads back from each run's rail.json (written by main). */
interface RailResult {
  /** Null (NaN in JSON) when no webhook arrived. */
  lateMs: { p99: number | null };
  /** Null (NaN in JSON) for a run of 10 s or less. */
  lateP99After10s: number | null;
  moreThan5sLate: number;
  lost: number;
  postErrors: number;
  gatewayCpuS: number;
  benchCpuS: number;
}
type RunSummary = RailResult & { startedAt: string; loadavgAtStart: number };
/** A run that failed or in which no webhook arrived counts as missing the target. */
const p99Of = (r: RunSummary | null): number => r?.lateMs.p99 ?? Infinity;
const msOrMiss = (ms: number): string => (Number.isFinite(ms) ? `${ms.toFixed(0)} ms` : 'a run without a figure');

/**
 * Runs this bench `runs` times, each in a process of its own (so that each load generator starts as cold
 * as the gateway it measures), prints their reports as they come, then one line per run and a summary.
 * Every run's result is kept in bench/.tmp/rail-runs.json.
 */
async function repeat(runs: number): Promise<void> {
  /** Null for a run that failed: it is listed, and counted as a miss. */
  const results: Array<RunSummary | null> = [];
  for (let i = 1; i <= runs; i++) {
    const startedAt = new Date().toISOString().slice(11, 19);
    const load = os.loadavg()[0]!.toFixed(2);
    console.log(`== run ${i} of ${runs}, ${startedAt} UTC, load average ${load}`);
    const child = spawnSync(process.execPath, [...process.execArgv, process.argv[1]!], { env: { ...process.env, BENCH_RAIL_RUNS: '1' }, stdio: ['ignore', 'inherit', 'inherit'] });
    if (child.status === 0) {
      results.push({ startedAt, loadavgAtStart: Number(load), ...(JSON.parse(fs.readFileSync(path.join(TMP, 'rail.json'), 'utf8')) as RailResult) });
    } else {
      console.log(`run ${i} failed (exit ${child.status ?? child.signal})`);
      results.push(null);
    }
  }
  const p99s = results.map(p99Of);
  const under = p99s.filter((p) => p < TARGET_P99_MS).length;
  const done = results.filter((r): r is RunSummary => r !== null);
  const mode = process.env.BENCH_RAIL_DATA_DIR === '1' ? ' (journaled)' : '';
  console.log(`\n${runs} runs at ${RATE}/s for ${SECONDS} s${mode}, each on a gateway just started${WARMUP_S > 0 ? ` after ${WARMUP_S} s of warm-up` : ''}:`);
  for (const [i, r] of results.entries()) {
    if (!r) console.log(`  run ${i + 1}: failed`);
    else console.log(`  run ${i + 1} (${r.startedAt}, load ${r.loadavgAtStart}): lateness p99 ${r.lateMs.p99?.toFixed(0) ?? 'n/a (none arrived)'} ms (after the first 10 s ${r.lateP99After10s?.toFixed(0) ?? 'n/a'}), ${r.moreThan5sLate} more than 5 s late, ${r.lost} lost, ${r.postErrors} POST errors; gateway CPU ${r.gatewayCpuS.toFixed(1)} s, load generator ${r.benchCpuS.toFixed(1)} s`);
  }
  console.log(`lateness p99 under ${TARGET_P99_MS} ms in ${under} of ${runs} runs; median ${msOrMiss(percentile(p99s, 50))}, worst ${msOrMiss(Math.max(...p99s))}; more than 5 s late in all: ${done.reduce((n, r) => n + r.moreThan5sLate, 0)}; lost in all: ${done.reduce((n, r) => n + r.lost, 0)}`);
  fs.writeFileSync(path.join(TMP, 'rail-runs.json'), JSON.stringify(results, null, 2));
  if (done.length < runs) throw new Error(`${runs - done.length} of ${runs} runs failed (their output is above)`);
}

(RUNS > 1 ? repeat(RUNS) : main()).then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
