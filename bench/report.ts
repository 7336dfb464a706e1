import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { BUDGETS, type Budget, type BudgetedRow } from './budgets';
import { KIND_LABEL, type FanoutResult } from './fanout/fanout';
import { SUBSCRIBER_KINDS } from './fanout/protocol';
import type { RefusalResult } from './lib/refusedQuery';
import type { BenchSettings } from './lib/settings';
import type { Measure } from './lib/stats';
import type { WebhookResult } from './webhooks/webhooks';

/** Everything one run measured, keyed by row. */
export interface BenchResults {
  startedAt: Date;
  finishedAt: Date;
  loadBefore: number[];
  loadAfter: number[];
  settings: BenchSettings;
  graphqlAvailable: boolean;
  rows: Partial<Record<RowKey, Measure>>;
  fanout?: FanoutResult;
  /** The large row: 5,000 SSE + 5,000 graphql-ws at scale 1, on a gateway of its own. */
  fanoutLarge?: FanoutResult;
  webhooks?: WebhookResult;
  /** A costly GraphQL document refused, new each time and repeated, against an accepted trivial query. */
  refusals?: RefusalResult;
  notes: string[];
}

export type RowKey = 'express' | 'get' | 'list' | 'graphql' | 'graphqlOne' | 'insert' | 'post' | 'prism' | 'find';

interface RowSpec {
  key: RowKey;
  label: string;
  baseline?: RowKey;
}

/** Table order: each gateway row next to the baseline it is compared with. */
const ROWS: RowSpec[] = [
  { key: 'express', label: 'Baseline: bare Express 5 route, small JSON (framework ceiling)' },
  { key: 'get', label: '`GET /v1/payment_intents/{id}`', baseline: 'express' },
  { key: 'list', label: '`GET /v1/payment_intents?limit=25`', baseline: 'express' },
  { key: 'graphql', label: '`POST /graphql`: detail page, intent with its refunds and events (every field, events\' nested objects)', baseline: 'get' },
  { key: 'graphqlOne', label: '`POST /graphql`: one intent with REST\'s fields', baseline: 'get' },
  { key: 'insert', label: 'Baseline: driver `insertOne` (storage limit)' },
  { key: 'post', label: '`POST /v1/payment_intents` (unique Idempotency-Key each)', baseline: 'insert' },
  { key: 'prism', label: 'Baseline: Prism 5.14.2 mock of `POST /payment_intents`' },
  { key: 'find', label: 'Baseline: driver `findOne` by _id (storage limit)' },
];

const BASELINE_NAME: Partial<Record<RowKey, string>> = { express: 'Express ceiling', get: 'GET by id', insert: 'insertOne', find: 'findOne', prism: 'Prism' };

const f0 = (n: number | undefined | null) => (n === undefined || n === null || !Number.isFinite(n) ? 'n/a' : n.toFixed(0));
const f1 = (n: number | undefined | null) => (n === undefined || n === null || !Number.isFinite(n) ? 'n/a' : n.toFixed(1));
const pct = (n: number) => (Number.isFinite(n) ? `${(n * 100).toFixed(0)} %` : 'n/a');
const mib = (bytes: number | null | undefined) => (bytes === null || bytes === undefined || !Number.isFinite(bytes) ? 'n/a' : `${(bytes / 1024 / 1024).toFixed(1)} MiB`);

export interface TargetOutcome {
  target: string;
  measured: string;
  pass: boolean | null;
}

export function evaluateTargets(r: BenchResults): TargetOutcome[] {
  const { rows, fanout, webhooks, settings } = r;
  const out: TargetOutcome[] = [];
  const ratio = (a?: Measure, b?: Measure) => (a && b ? a.rps / b.rps : NaN);
  const clean = (...ms: Array<Measure | undefined>) => ms.every((m) => m && m.errors === 0);

  const postInsert = ratio(rows.post, rows.insert);
  out.push({
    target: '`POST /payment_intents` ≥ 25 % of raw `insertOne` rate',
    measured: `${pct(postInsert)} (${f0(rows.post?.rps)} vs ${f0(rows.insert?.rps)} /s)`,
    pass: Number.isFinite(postInsert) ? postInsert >= 0.25 && clean(rows.post, rows.insert) : null,
  });
  const postPrism = ratio(rows.post, rows.prism);
  out.push({
    target: '`POST /payment_intents` faster than Prism mocking it',
    measured: `${Number.isFinite(postPrism) ? postPrism.toFixed(2) : 'n/a'}× (${f0(rows.post?.rps)} vs ${f0(rows.prism?.rps)} req/s)`,
    pass: Number.isFinite(postPrism) ? postPrism > 1 && clean(rows.post, rows.prism) : null,
  });
  const getExpress = ratio(rows.get, rows.express);
  const getMin = 0.65;
  out.push({
    target: `\`GET /payment_intents/{id}\` ≥ ${pct(getMin)} of bare Express`,
    measured: `${pct(getExpress)} (${f0(rows.get?.rps)} vs ${f0(rows.express?.rps)} req/s)`,
    pass: Number.isFinite(getExpress) ? getExpress >= getMin && clean(rows.get, rows.express) : null,
  });
  for (const [key, what, min] of [
    ['graphql', 'GraphQL detail page (intent + refunds + events, every field)', 0.45],
    ['graphqlOne', "GraphQL one intent with REST's fields", 0.75],
  ] as const) {
    const r = ratio(rows[key], rows.get);
    out.push({
      target: `${what} ≥ ${min.toFixed(2)}× \`GET /payment_intents/{id}\``,
      measured: `${Number.isFinite(r) ? r.toFixed(2) : 'n/a'}× (${f0(rows[key]?.rps)} vs ${f0(rows.get?.rps)} req/s)`,
      pass: Number.isFinite(r) ? r >= min && clean(rows[key], rows.get) : null,
    });
  }
  out.push(...budgetTargets(r));
  if (fanout) {
    const live = fanout.all.open;
    const full = live >= 4000;
    out.push({
      target: 'Fan-out p99 < 250 ms with 4,000 live subscribers',
      measured: `p99 ${f0(fanout.all.p99)} ms with ${live} live${full ? '' : ` (not 4,000: scale ${settings.scale})`}, ${fanout.all.missed} missed`,
      pass: fanout.all.p99 < 250 && fanout.all.missed === 0 && fanout.connectFailures.length === 0 && full,
    });
  } else {
    out.push({ target: 'Fan-out p99 < 250 ms with 4,000 live subscribers', measured: 'not run', pass: null });
  }
  const large = r.fanoutLarge;
  const largeTarget = 'Fan-out p99 < 250 ms with 10,000 live subscribers (2,500 each: SSE, graphql-ws, graphql-sse, multipart)';
  if (large) {
    const live = large.all.open;
    const full = live >= 10_000;
    out.push({
      target: largeTarget,
      measured: `p99 ${f0(large.all.p99)} ms with ${live} live${full ? '' : ` (not 10,000: ${large.kinds.length * settings.largeSubscribers} asked)`}, ${large.all.missed} missed`,
      pass: large.all.p99 < 250 && large.all.missed === 0 && large.connectFailures.length === 0 && full,
    });
    // Each kind's own p99 in the same run: a transport slower than the others shows here.
    for (const k of large.kinds) {
      out.push({ target: `  of which ${KIND_LABEL[k.kind]}: p99 < 250 ms`, measured: `p99 ${f0(k.latency.p99)} ms, ${k.latency.missed} missed`, pass: k.latency.p99 < 250 && k.latency.missed === 0 });
    }
  } else {
    out.push({ target: largeTarget, measured: 'not run', pass: null });
  }
  // Per kind, from the largest run made (the fixed part of the growth weighs least there).
  const memory = large ?? fanout;
  for (const kind of SUBSCRIBER_KINDS) {
    const target = `Gateway RSS per 1,000 ${KIND_LABEL[kind]} ≤ 25 MiB`;
    const measured = memory?.kinds.find((k) => k.kind === kind);
    if (!memory || !measured) out.push({ target, measured: 'not run', pass: null });
    else out.push({ target, measured: `${mib(measured.perThousand)} (${measured.open} open)`, pass: Number.isFinite(measured.perThousand) && measured.perThousand <= 25 * 2 ** 20 && memory.connectFailures.length === 0 });
  }
  if (webhooks) {
    out.push({
      target: 'Webhook lag p99 < 500 ms',
      measured: `p99 ${f0(webhooks.lagP99)} ms over ${webhooks.delivered}/${webhooks.events} events`,
      pass: webhooks.lagP99 < 500 && webhooks.delivered === webhooks.events && webhooks.rejected === 0,
    });
  } else {
    out.push({ target: 'Webhook lag p99 < 500 ms', measured: 'not run', pass: null });
  }
  return out;
}

const BUDGET_ROW_LABEL: Record<BudgetedRow, string> = {
  post: '`POST /v1/payment_intents`',
  get: '`GET /v1/payment_intents/{id}`',
  graphqlOne: "GraphQL one intent with REST's fields",
  graphql: 'GraphQL detail page',
};

/** Each measure of a budget: what it is called, its unit, and where a row's measure holds it. */
const BUDGET_MEASURES: Array<{ key: keyof Budget; what: string; unit: string; of: (m: Measure) => number | undefined }> = [
  { key: 'gatewayMs', what: 'gateway CPU', unit: ' ms', of: (m) => m.cpuPerOp?.gateway },
  { key: 'dbMs', what: 'database CPU', unit: ' ms', of: (m) => m.cpuPerOp?.db },
  { key: 'commands', what: 'database commands', unit: '', of: (m) => m.dbPerOp?.commands },
  { key: 'writes', what: 'documents written', unit: '', of: (m) => m.dbPerOp?.writes },
];

/** One line per budgeted row and measure (bench/budgets.ts); a row with errors fails: its figures are not the request's. */
function budgetTargets(r: BenchResults): TargetOutcome[] {
  const out: TargetOutcome[] = [];
  for (const [row, budget] of Object.entries(BUDGETS) as Array<[BudgetedRow, Budget]>) {
    const m = r.rows[row];
    for (const { key, what, unit, of } of BUDGET_MEASURES) {
      const target = `${BUDGET_ROW_LABEL[row]} ${what} ≤ ${budget[key]}${unit} per request`;
      const value = m ? of(m) : undefined;
      if (!m) out.push({ target, measured: 'not run', pass: null });
      else if (value === undefined || !Number.isFinite(value)) out.push({ target, measured: 'not measured', pass: null });
      else out.push({ target, measured: `${value.toFixed(2)}${unit}${m.errors ? ` (${m.errors} errors)` : ''}`, pass: value <= budget[key] && m.errors === 0 });
    }
  }
  return out;
}

function machine(): string[] {
  const cpus = os.cpus();
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    // not a checkout
  }
  return [
    `- nproc: ${os.availableParallelism()}; CPU: ${cpus[0]?.model ?? 'unknown'}`,
    `- RAM: ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB; Node ${process.version}; ${os.type()} ${os.release()}`,
    `- commit: ${commit}`,
  ];
}

export function renderResults(r: BenchResults): string {
  const s = r.settings;
  const L: string[] = [];
  L.push('# Benchmark results', '');
  L.push(`Written by \`npm run bench\` (see [README.md](README.md) for the method). Ratios are from this one run;`);
  L.push('absolute figures depend on the machine and on whatever else it was running.', '');
  L.push(`- date: ${r.startedAt.toISOString()} (run took ${((r.finishedAt.getTime() - r.startedAt.getTime()) / 1000).toFixed(0)} s)`);
  L.push(...machine());
  L.push(`- load average (1/5/15 min) before: ${r.loadBefore.map((n) => n.toFixed(2)).join(' / ')}; after: ${r.loadAfter.map((n) => n.toFixed(2)).join(' / ')}`);
  L.push(
    `- settings: gateway and database ${s.compiled ? 'from their bundles (dist/, as `npm start` runs them)' : 'from src/ through tsx (BENCH_FROM_SOURCE)'}; BENCH_SCALE=${s.scale}, ${s.durationS} s per row after ${s.warmupS} s warm-up, in ${s.slices} slices taken in turns with the rows it is compared with, ${s.connections} connections; ` +
      `${s.subscribers} SSE + ${s.subscribers} graphql-ws subscribers (10,000 row: ${s.largeSubscribers} of each of four kinds) over ${s.fanoutPayments} payments, ${s.fanoutRate} changes/s; ${s.webhookEvents} webhook events ${s.webhookRate > 0 ? `at ${s.webhookRate}/s` : 'as fast as possible'}` +
      `${s.profile ? '; **CPU profiling on (slower)**' : ''}`,
    '',
  );

  L.push('## Targets', '', '| Target | Measured | Result |', '|---|---|---|');
  for (const t of evaluateTargets(r)) L.push(`| ${t.target} | ${t.measured} | ${t.pass === null ? 'NOT RUN' : t.pass ? 'PASS' : 'FAIL'} |`);
  L.push('');

  L.push('## Request/response rows', '');
  L.push(
    '| Row | Throughput (/s) | p50 (ms) | p99 (ms) | Ratio to baseline | CPU ms per request: server / database | Database commands / documents written per request | Errors |',
    '|---|---:|---:|---:|---|---|---|---:|',
  );
  for (const spec of ROWS) {
    const m = r.rows[spec.key];
    if (!m) continue;
    let ratio = '—';
    if (spec.baseline) {
      const b = r.rows[spec.baseline];
      ratio = b ? `${pct(m.rps / b.rps)} of ${BASELINE_NAME[spec.baseline]}` : 'n/a';
      if (spec.key === 'post' && r.rows.prism) ratio += `; ${(m.rps / r.rows.prism.rps).toFixed(2)}× Prism`;
      if (spec.key === 'get' && r.rows.find) ratio += `; ${pct(m.rps / r.rows.find.rps)} of findOne`;
    }
    const c = m.cpuPerOp ?? {};
    const server = c.gateway ?? c.server;
    const cpu = `${server === undefined ? '—' : server.toFixed(2)} / ${c.db === undefined ? '—' : c.db.toFixed(2)}`;
    const dbOps = m.dbPerOp ? `${m.dbPerOp.commands.toFixed(2)} / ${m.dbPerOp.writes.toFixed(2)}` : '—';
    L.push(`| ${spec.label} | ${f0(m.rps)} | ${f1(m.p50)} | ${f1(m.p99)} | ${ratio} | ${cpu} | ${dbOps} | ${m.errors ? `**${m.errors}** (${m.note})` : '0'} |`);
  }
  if (!r.graphqlAvailable) L.push('', 'GraphQL was not served by this build (POST /graphql answered 404): its rows were skipped.');
  L.push('');

  for (const [title, fo] of [
    ['Live fan-out (one gateway process)', r.fanout],
    ['Live fan-out, 10,000 subscribers (one gateway process)', r.fanoutLarge],
  ] as const) {
    if (!fo) continue;
    L.push(`## ${title}`, '');
    L.push(
      `${fo.kinds.map((k) => `${k.open} ${k.kind}`).join(', ')} subscribers (each its own connection), spread over ${fo.payments} reference payments; ` +
        `each payment cancelled in turn, ${fo.ratePerSecond} per second. Latency = from just before the cancel request is sent to the ` +
        'cancellation arriving at each subscriber (nothing subtracted).',
      '',
    );
    L.push('| Subscribers | Live | Received | Missed | p50 (ms) | p99 (ms) | Gateway RSS per 1,000 connections |', '|---|---:|---:|---:|---:|---:|---:|');
    for (const k of fo.kinds) L.push(`| ${KIND_LABEL[k.kind]} | ${k.open} | ${k.latency.received} | ${k.latency.missed} | ${f1(k.latency.p50)} | ${f1(k.latency.p99)} | ${mib(k.perThousand)} |`);
    L.push(`| all | ${fo.all.open} | ${fo.all.received} | ${fo.all.missed} | ${f1(fo.all.p50)} | ${f1(fo.all.p99)} | ${mib(fo.perThousandAll)} |`);
    L.push('');
    L.push(
      `The cancel request itself: p50 ${f1(fo.trigger.p50)} ms, p99 ${f1(fo.trigger.p99)} ms (${fo.trigger.errors} errors). ` +
        `From the intent's \`updated_at\` (set with the change) to receipt: p50 ${f1(fo.sinceChange.p50)} ms, p99 ${f1(fo.sinceChange.p99)} ms ` +
        '(diagnostic: the fan-out part alone, wall clocks of one machine, `updated_at` in whole ms). ' +
        `Gateway RSS: ${mib(fo.rssBefore)} before (after 5 s of GETs, which grow V8's young generation to its maximum as any load does), ` +
        `then ${fo.kinds.map((k) => `${mib(k.rssAfter)} with the ${k.kind} subscribers`).join(', ')} (each kind connected after the one before).`,
    );
    if (fo.connectFailures.length) L.push('', `Connection failures: ${fo.connectFailures.join('; ')}`);
    L.push('');
  }

  if (r.webhooks) {
    const w = r.webhooks;
    L.push('## Webhooks', '');
    L.push('| Events | Delivered | Produced (/s) | Delivered (/s) | Lag p50 (ms) | Lag p99 (ms) | Duplicates | Rejected |', '|---:|---:|---:|---:|---:|---:|---:|---:|');
    L.push(`| ${w.events} | ${w.delivered} | ${f0(w.producedPerSecond)} | ${f0(w.deliveredPerSecond)} | ${f1(w.lagP50)} | ${f1(w.lagP99)} | ${w.duplicates} | ${w.rejected} |`);
    L.push(
      '',
      `Events produced ${w.rate > 0 ? `at ${w.rate}/s (paced)` : `as fast as ${s.connections} concurrent creations go`}: one \`payment.created\` per ` +
        '`POST /v1/payment_intents`. Lag = receipt at the local receiver (signature verified) minus the event\'s `created_at`. ' +
        `The creations themselves took p50 ${f1(w.createP50)} ms, p99 ${f1(w.createP99)} ms: \`created_at\` is stamped as a creation starts, ` +
        'so the lag includes most of the creating request.',
    );
    if (w.firstRejection) L.push('', `First rejection: ${w.firstRejection}`);
    L.push('');
  }

  if (r.refusals) {
    const q = r.refusals;
    L.push('## Refusals', '');
    L.push('| GraphQL request (one at a time, one secret key) | Requests | Gateway CPU (ms/request) | × accepted | Wall p50 (ms) | Wall p95 (ms) |', '|---|---:|---:|---:|---:|---:|');
    for (const row of [q.distinct, q.underTokens, q.repeated, q.accepted]) {
      L.push(`| ${row.label} | ${row.requests} | ${f1(row.cpuMs)} | ${(row.cpuMs / q.accepted.cpuMs).toFixed(1)} | ${f1(row.wallP50)} | ${f1(row.wallP95)} |`);
    }
    L.push(
      '',
      `Each refused document is aliased \`__type\` fields, every one of which alone would walk the schema up to the cost limit. One of ${q.docBytes} bytes is refused where parsing passes 5,000 tokens; ` +
        `one of ${q.underTokensBytes} bytes is parsed whole and refused by the cost walk, which runs before validation, stops at the budget and measures a repeated selection set once. A refusal is then remembered by the text's hash.`,
      '',
    );
  }

  if (r.notes.length) L.push('## Notes', '', ...r.notes.map((n) => `- ${n}`), '');
  return L.join('\n');
}
