/**
 * npm run bench:scale — do reads stay flat as the data grows? One account is grown to each size of
 * BENCH_SCALE_STEPS (three in four multicaixa_reference, one in four express 923000001, failing at
 * +5 s), beside a small account of 50 payments; at each size every read route is timed one request at
 * a time (p50, p95) for both accounts, with the gateway's RSS; at the end the gateway is restarted on
 * its data directory and the time until it serves a known payment is taken, and counts are compared.
 *
 * Layout: the gateway in its own process with DATA_DIR set and no MONGODB_URI, i.e. the embedded
 * engine inside the gateway process, compiled (dist/main.js), as `npm start` runs it. Knobs: BENCH_SCALE_STEPS (1000,10000,50000),
 * BENCH_SCALE_SAMPLES (40 per route and account), BENCH_SCALE_CONCURRENCY (32 POSTs in flight while growing), BENCH_SCALE_RESTARTS (3 restarts timed, the median reported),
 * BENCH_SCALE_ROUTES (a regular expression: only the routes it matches are timed).
 *
 * Last row, `npm start`: the real command (npm, then start.mjs: the staleness check and the bundle) on the
 * largest step's data directory, timed from its spawn to the first 200 of an authenticated GET of a known
 * payment, BENCH_SCALE_NPM_STARTS times (5; the median reported), with the moment the gateway printed its
 * ready line and the CPU time its processes had used by the first 200 (a figure the machine's load moves
 * less than the wall time; BENCH_SCALE_TREE=<checkout> runs another checkout's `npm start`, for a before/after). BENCH_SCALE_KEEP_DATA=1 keeps the data directory
 * and writes bench/.tmp/scale-kept.json (the directory, a key and a payment id), which
 * BENCH_SCALE_REUSE=1 reads to time only that row on it, without growing anything (profiling a start).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Api } from '../lib/api';
import { buildOnce, freePort, ROOT, rssBytes, TMP } from '../lib/processes';
import { BENCH_WEBHOOK_SECRETS_KEY, startGatewayProcess, type Service } from '../lib/services';
import { percentile, pool, sleep } from '../lib/stats';

const STEPS = (process.env.BENCH_SCALE_STEPS ?? '1000,10000,50000').split(',').map(Number);
const SAMPLES = Number(process.env.BENCH_SCALE_SAMPLES ?? 40);
const CONCURRENCY = Number(process.env.BENCH_SCALE_CONCURRENCY ?? 32);
const RESTARTS = Number(process.env.BENCH_SCALE_RESTARTS ?? 3);

interface Account {
  name: string;
  api: Api;
  sk: string;
  ids: string[];
  /** One payment to search for by each key (made before the growth, so the oldest). */
  probe?: { id: string; number: string; merchantReference: string; mobile: string };
}

const reference = (i: number) => ({ amount: 1000 + (i % 5000), currency: 'AOA', payment_method: 'multicaixa_reference' });
const expressFail = (i: number) => ({ amount: 1000 + (i % 5000), currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000001' } });

async function grow(acct: Account, to: number): Promise<void> {
  const from = acct.ids.length;
  const items = Array.from({ length: to - from }, (_, k) => from + k);
  await pool(items, CONCURRENCY, async (i) => {
    const body = i % 4 === 3 ? expressFail(i) : reference(i);
    const p = await acct.api.must<{ id: string }>(201, 'POST', '/v1/payment_intents', body, { 'idempotency-key': `scale-${acct.name}-${i}` });
    acct.ids.push(p.id);
  });
}

async function timeOnce(fn: () => Promise<unknown>): Promise<number> {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

async function get(url: string, sk: string): Promise<void> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${sk}` } });
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status}`);
  await res.arrayBuffer();
}

async function graphql(base: string, sk: string, query: string, variables: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${base}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${sk}`, 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
  const body = (await res.json()) as { errors?: unknown };
  if (res.status !== 200 || body.errors) throw new Error(`GraphQL: ${res.status} ${JSON.stringify(body.errors)}`);
}

/** Time to the first event of a payment's SSE stream (its snapshot), then closed. */
async function sseSnapshot(url: string, sk: string): Promise<void> {
  const ctl = new AbortController();
  const res = await fetch(url, { headers: { authorization: `Bearer ${sk}`, accept: 'text/event-stream' }, signal: ctl.signal });
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes('\n\n')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  ctl.abort();
}

const OVERVIEW = `query ($range: OverviewRange) { overview(range: $range) {
  from to buckets { start count paidVolume byStatus { status count } } methods { method count paid failed successRate paidVolume }
  webhooks { deliveries delivered failed pending successRate lagP50Ms lagP95Ms buckets { start delivered lagP50Ms } } } }`;
const SEARCH = 'query ($search: String) { paymentIntents(first: 25, filter: { search: $search }) { nodes { id status } pageInfo { hasNextPage endCursor } } }';

type Route = [string, (acct: Account, base: string, i: number) => Promise<unknown>];
const pick = (acct: Account, i: number) => acct.ids[(i * 7919) % acct.ids.length]!;
const ALL_ROUTES: Route[] = [
  ['GET /payment_intents/{id}', (a, b, i) => get(`${b}/v1/payment_intents/${pick(a, i)}`, a.sk)],
  ['GET /payment_intents?limit=25', (a, b) => get(`${b}/v1/payment_intents?limit=25`, a.sk)],
  ['GET /payment_intents?status=FAILED', (a, b) => get(`${b}/v1/payment_intents?limit=25&status=FAILED`, a.sk)],
  ['GET /events?limit=25', (a, b) => get(`${b}/v1/events?limit=25`, a.sk)],
  ['GET /logs?limit=25', (a, b) => get(`${b}/v1/logs?limit=25`, a.sk)],
  ['GET /payment_links', (a, b) => get(`${b}/v1/payment_links`, a.sk)],
  ['GET /webhook_endpoints', (a, b) => get(`${b}/v1/webhook_endpoints`, a.sk)],
  ['GET /account', (a, b) => get(`${b}/v1/account`, a.sk)],
  ['GraphQL paymentIntent { events }', (a, b, i) => graphql(b, a.sk, 'query($id: ID!) { paymentIntent(id: $id) { id status events { id type } } }', { id: pick(a, i) })],
  ['GraphQL paymentIntents(first: 25) { events }', (a, b) => graphql(b, a.sk, '{ paymentIntents(first: 25) { edges { node { id status events { id type } } } } }', {})],
  ['GraphQL overview(LAST_24_HOURS)', (a, b) => graphql(b, a.sk, OVERVIEW, { range: 'LAST_24_HOURS' })],
  ['GraphQL overview(LAST_7_DAYS)', (a, b) => graphql(b, a.sk, OVERVIEW, { range: 'LAST_7_DAYS' })],
  ['GraphQL search: id', (a, b) => graphql(b, a.sk, SEARCH, { search: a.probe!.id })],
  ['GraphQL search: merchant reference', (a, b) => graphql(b, a.sk, SEARCH, { search: a.probe!.merchantReference })],
  ['GraphQL search: mobile (1 in 4 payments)', (a, b) => graphql(b, a.sk, SEARCH, { search: `+244${a.probe!.mobile}` })],
  ['GraphQL search: reference number', (a, b) => graphql(b, a.sk, SEARCH, { search: a.probe!.number })],
  ['SSE snapshot', (a, b, i) => sseSnapshot(`${b}/v1/payment_intents/${pick(a, i)}/events`, a.sk)],
  ['POST /payment_intents', (a, b, i) => a.api.must(201, 'POST', '/v1/payment_intents', reference(i), { 'idempotency-key': `scale-post-${a.name}-${Date.now()}-${i}` })],
];

// BENCH_SCALE_ROUTES: only the routes whose name matches this regular expression (a quick run of a few).
const ROUTES = ALL_ROUTES.filter(([name]) => new RegExp(process.env.BENCH_SCALE_ROUTES ?? '').test(name));

interface Row {
  step: number;
  account: string;
  route: string;
  p50: number;
  p95: number;
}

async function measure(step: number, accounts: Account[], base: string): Promise<Row[]> {
  const rows: Row[] = [];
  for (const [route, fn] of ROUTES) {
    for (const a of accounts) {
      for (let i = 0; i < 3; i++) await fn(a, base, i); // warm-up
      const samples: number[] = [];
      for (let i = 0; i < SAMPLES; i++) samples.push(await timeOnce(() => fn(a, base, i + 3)));
      rows.push({ step, account: a.name, route, p50: percentile(samples, 50), p95: percentile(samples, 95) });
    }
  }
  return rows;
}

/** The gateway as `npm start` runs it: compiled (dist/main.js, built once before the first start). */
async function startGateway(dataDir: string): Promise<Service> {
  return startGatewayProcess({ mongodbUri: '', profile: false, compiled: true, name: 'scale-gateway', env: { DATA_DIR: dataDir } });
}

async function main(): Promise<void> {
  if (process.env.BENCH_SCALE_REUSE === '1') return startOnly();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-scale-'));
  buildOnce();
  let gw = await startGateway(dataDir);
  const accounts: Account[] = [];
  for (const name of ['big', 'small']) {
    const r = await new Api(gw.url).must<{ sk: string }>(201, 'POST', '/v1/sandbox/accounts', { name });
    accounts.push({ name, api: new Api(gw.url, r.sk), sk: r.sk, ids: [] });
  }
  const [big, small] = accounts as [Account, Account];
  for (const a of accounts) {
    const merchantReference = `scale-order-${a.name}`;
    const p = await a.api.must<{ id: string; reference: { number: string } }>(201, 'POST', '/v1/payment_intents', { ...reference(0), merchant_reference: merchantReference }, {
      'idempotency-key': `scale-probe-${a.name}`,
    });
    a.probe = { id: p.id, number: p.reference.number, merchantReference, mobile: '923000001' };
  }
  await new Api(gw.url, big.sk).must(201, 'POST', '/v1/payment_links', { amount: 5000 });
  await grow(small, 50);
  const rows: Row[] = [];
  const rss: Array<{ step: number; rssMiB: number }> = [];
  for (const step of STEPS) {
    const t0 = Date.now();
    await grow(big, step);
    console.log(`grew to ${step} payments (${((Date.now() - t0) / 1000).toFixed(0)} s); letting the express ones settle`);
    await sleep(6_000);
    rows.push(...(await measure(step, [big, small], gw.url)));
    if (global.gc) global.gc();
    rss.push({ step, rssMiB: rssBytes(gw.child.pid) / 2 ** 20 });
    console.log(`  RSS ${rss.at(-1)!.rssMiB.toFixed(0)} MiB`);
  }
  // Restart on the same data, RESTARTS times (one start is at the mercy of whatever else the machine
  // does): time to a served payment each time, and nothing lost after the last.
  const before = (await big.api.must<{ data: unknown[] }>(200, 'GET', '/v1/payment_intents?limit=100')).data.length;
  const restarts: number[] = [];
  for (let r = 0; r < RESTARTS; r++) {
    await gw.stop();
    const t0 = Date.now();
    gw = await startGateway(dataDir);
    await get(`${gw.url}/v1/payment_intents/${big.ids[r % big.ids.length]!}`, big.sk);
    restarts.push(Date.now() - t0);
  }
  const restartMs = percentile(restarts, 50);
  const afterApi = new Api(gw.url, big.sk);
  let found = 0;
  for (const id of big.ids.slice(0, 200)) if ((await afterApi.request('GET', `/v1/payment_intents/${id}`)).status === 200) found++;
  const after = (await afterApi.must<{ data: unknown[] }>(200, 'GET', '/v1/payment_intents?limit=100')).data.length;
  await gw.stop();
  const probe = { dataDir, sk: big.sk, id: big.ids[0]!, payments: big.ids.length + small.ids.length };
  const npmStarts = await timeNpmStarts(probe);
  // BENCH_SCALE_KEEP_DATA=1 keeps the data directory, to profile a restart on it.
  if (process.env.BENCH_SCALE_KEEP_DATA === '1') {
    fs.mkdirSync(TMP, { recursive: true });
    fs.writeFileSync(KEPT, JSON.stringify(probe));
    console.log(`data directory kept: ${dataDir} (${KEPT})`);
  } else fs.rmSync(dataDir, { recursive: true, force: true });

  const first = STEPS[0]!;
  const last = STEPS.at(-1)!;
  const lines = [`| route | account | ${STEPS.map((s) => `p50 / p95 ms at ${s}`).join(' | ')} | p50 ratio ${last}/${first} |`, `|---|---|${STEPS.map(() => '---:').join('|')}|---:|`];
  for (const [route] of ROUTES) {
    for (const a of ['big', 'small']) {
      const rs = STEPS.map((s) => rows.find((r) => r.step === s && r.account === a && r.route === route)!);
      lines.push(`| ${route} | ${a} | ${rs.map((r) => `${r.p50.toFixed(1)} / ${r.p95.toFixed(1)}`).join(' | ')} | ${(rs.at(-1)!.p50 / rs[0]!.p50).toFixed(2)}× |`);
    }
  }
  const perK = rss.length > 1 ? (rss.at(-1)!.rssMiB - rss[0]!.rssMiB) / ((last - first) / 1000) : NaN;
  lines.push('', `RSS: ${rss.map((r) => `${r.rssMiB.toFixed(0)} MiB at ${r.step}`).join(', ')}; ${perK.toFixed(1)} MiB per 1,000 payments between ${first} and ${last}.`);
  lines.push(`Restart on ${last} payments' data: ${restarts.map((ms) => (ms / 1000).toFixed(2)).join(' / ')} s to a served payment (median ${(restartMs / 1000).toFixed(2)} s); ${found}/200 sampled payments found after it; newest-100 page ${before} before, ${after} after.`);
  lines.push(npmStartLine(probe.payments, npmStarts));
  console.log(`\n${lines.join('\n')}`);
  fs.mkdirSync(TMP, { recursive: true });
  fs.writeFileSync(path.join(TMP, 'scale.json'), JSON.stringify({ steps: STEPS, samples: SAMPLES, rows, rss, restarts, restartMs, found, npmStarts, loadavg: os.loadavg() }, null, 2));
}

const KEPT = path.join(TMP, 'scale-kept.json');
const NPM_STARTS = Number(process.env.BENCH_SCALE_NPM_STARTS ?? 5);

interface Probe {
  dataDir: string;
  sk: string;
  id: string;
  payments: number;
}

interface NpmStart {
  /** spawn of `npm start` → first 200 of GET /v1/payment_intents/{id} */
  firstMs: number;
  /** → the ready line on stderr (the gateway serves) */
  readyMs: number | null;
  /** CPU time (user + system) of every process of the start (npm, sh, node and its threads) at the first 200 */
  cpuMs: number;
  /** /proc/loadavg's 1-minute figure just before the spawn */
  load: number;
}

/** CPU time (utime + stime, ms) of the live processes of process group `pgid` (/proc/<pid>/stat). */
function groupCpuMs(pgid: number): number {
  let ticks = 0;
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // after the command: state(0) ppid(1) pgrp(2) ... utime(11) stime(12) cutime(13) cstime(14)
      if (Number(f[2]) === pgid) ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    } catch {
      // gone meanwhile
    }
  }
  return ticks * 10; // USER_HZ = 100
}

/** BENCH_SCALE_REUSE=1: the `npm start` row alone, on the data directory a BENCH_SCALE_KEEP_DATA=1 run kept. */
async function startOnly(): Promise<void> {
  const probe = JSON.parse(fs.readFileSync(KEPT, 'utf8')) as Probe;
  const starts = await timeNpmStarts(probe);
  console.log(`\n${npmStartLine(probe.payments, starts)}`);
  fs.mkdirSync(TMP, { recursive: true });
  fs.writeFileSync(path.join(TMP, 'scale-npm-start.json'), JSON.stringify({ probe: { ...probe, sk: undefined }, starts }, null, 2));
}

async function timeNpmStarts(probe: Probe): Promise<NpmStart[]> {
  const starts: NpmStart[] = [];
  for (let i = 0; i < NPM_STARTS; i++) {
    // Between two starts: the previous process's exit and its files settled (not part of any start).
    await sleep(1_000);
    starts.push(await timeNpmStart(probe));
    const s = starts.at(-1)!;
    console.log(`npm start ${i + 1}/${NPM_STARTS}: first 200 after ${s.firstMs} ms, CPU ${s.cpuMs} ms (ready line ${s.readyMs ?? '?'} ms; load ${s.load})`);
  }
  return starts;
}

function npmStartLine(payments: number, starts: NpmStart[]): string {
  const med = (xs: number[]) => percentile(xs, 50);
  const known = (xs: Array<number | null>) => xs.filter((x): x is number => x !== null);
  return (
    `\`npm start\` on ${payments.toLocaleString('en')} payments' data: first 200 of an authenticated GET after ${starts.map((s) => (s.firstMs / 1000).toFixed(2)).join(' / ')} s ` +
    `(median ${(med(starts.map((s) => s.firstMs)) / 1000).toFixed(2)} s; ready line at median ${(med(known(starts.map((s) => s.readyMs))) / 1000).toFixed(2)} s; ` +
    `CPU of npm and the gateway's threads by then, median ${(med(starts.map((s) => s.cpuMs)) / 1000).toFixed(2)} s; load ${starts.map((s) => s.load.toFixed(1)).join(' / ')}).`
  );
}

/**
 * One `npm start`, as an operator types it (npm, then start.mjs: the staleness check and the bundle with
 * npm start's flags), in a process group of its own so that the stop reaches node under npm.
 */
async function timeNpmStart(probe: Probe): Promise<NpmStart> {
  const port = await freePort();
  const load = Number(fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  const t0 = performance.now();
  const child = spawn('npm', ['start', '--silent'], {
    // BENCH_SCALE_TREE: another checkout's `npm start` (built and installed there), for a before/after.
    cwd: process.env.BENCH_SCALE_TREE ?? ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: probe.dataDir,
      MONGODB_URI: '',
      WEBHOOK_SECRETS_KEY: BENCH_WEBHOOK_SECRETS_KEY,
      RATE_LIMIT_PER_MINUTE: '100000000',
      ACCOUNT_CREATION_PER_MINUTE: '100000000',
      PUBLIC_RATE_LIMIT_PER_MINUTE: '100000000',
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
    },
  });
  let readyMs: number | null = null;
  let output = '';
  const watch = (chunk: Buffer) => {
    const now = Math.round(performance.now() - t0);
    const text = chunk.toString();
    if (output.length < 100_000) output += text;
    if (readyMs === null && text.includes('Gateway ready:')) readyMs = now;
  };
  child.stdout!.on('data', watch);
  child.stderr!.on('data', watch);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const url = `http://127.0.0.1:${port}/v1/payment_intents/${probe.id}`;
    const deadline = t0 + 60_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`npm start exited (${child.exitCode}):\n${output}`);
      if (performance.now() > deadline) throw new Error(`npm start: no 200 within 60 s:\n${output}`);
      try {
        const res = await fetch(url, { headers: { authorization: `Bearer ${probe.sk}` }, signal: AbortSignal.timeout(5_000) });
        await res.arrayBuffer();
        if (res.status === 200) break;
      } catch {
        // not listening yet
      }
      await sleep(10);
    }
    const firstMs = Math.round(performance.now() - t0);
    return { firstMs, readyMs, cpuMs: groupCpuMs(child.pid!), load };
  } finally {
    process.kill(-child.pid!, 'SIGTERM');
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
