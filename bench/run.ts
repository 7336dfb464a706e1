import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openRawDriverBench } from './baselines/rawDriver';
import { runFanout } from './fanout/fanout';
import { INSPECT_FLAG } from './lib/inspector';
import type { SubscriberKind } from './fanout/protocol';
import { GRAPHQL_DETAIL_QUERY, GRAPHQL_ONE_QUERY } from './lib/graphqlQueries';
import { openDbCounters, type DbCounterReader } from './lib/dbCounters';
import { Api, CREATE_INTENT_BODY, createAccount, createReferenceIntent, idempotencyKey, type BenchAccount } from './lib/api';
import { rotatingBodies, rotatingPaths, runHttpRow, uniqueKeyRequest } from './lib/load';
import { killAllChildren, PROFILE_DIR, ROOT, TMP } from './lib/processes';
import { startDatabase, startExpressBaseline, startGatewayProcess, startPrism, type Service } from './lib/services';
import { loadSettings } from './lib/settings';
import { measureRefusals } from './lib/refusedQuery';
import { mergeSlices, pool, sleep, type Measure } from './lib/stats';
import type { RequestSpec } from 'autocannon';
import { formatSummary, summarizeProfile } from './profile/summarize';
import { renderResults, type BenchResults, type RowKey } from './report';
import { runWebhooks } from './webhooks/webhooks';

/**
 * `npm run bench`: every figure and its baseline in one run, written to bench/RESULTS.md.
 * Phases: the request/response rows (each next to its baseline), the live fan-out, the webhooks.
 * The database and the gateway run in their own processes; the gateway is restarted per phase so
 * that each phase starts from an idle process (and, with BENCH_PROFILE=1, gets its own profile).
 */
const settings = loadSettings();
const started = Date.now();
const log = (m: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${m}`);
const want = (key: string) => settings.only.size === 0 || settings.only.has(key);


async function graphqlServed(gw: Service, sk: string): Promise<boolean> {
  const res = await fetch(`${gw.url}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${sk}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ __typename }' }),
  });
  await res.arrayBuffer();
  return res.status === 200;
}

/** A paid intent with two succeeded refunds, so the GraphQL row resolves non-empty lists. */
async function intentWithRefunds(account: BenchAccount): Promise<string> {
  const intent = await createReferenceIntent(account.api);
  await account.api.must(200, 'POST', '/sandbox/simulate/reference_paid', { reference: intent.reference.number });
  const refunds: string[] = [];
  for (let i = 0; i < 2; i++) {
    const rf = await account.api.must<{ id: string }>(201, 'POST', '/refunds', { payment_intent: intent.id, amount: 5_000 }, { 'idempotency-key': idempotencyKey() });
    refunds.push(rf.id);
  }
  const deadline = Date.now() + 20_000;
  for (const id of refunds) {
    while (Date.now() < deadline) {
      const rf = await account.api.must<{ status: string }>(200, 'GET', `/refunds/${id}`);
      if (rf.status === 'SUCCEEDED') break;
      await sleep(250);
    }
  }
  return intent.id;
}

async function main(): Promise<void> {
  fs.mkdirSync(TMP, { recursive: true });
  if (settings.profile) fs.rmSync(PROFILE_DIR, { recursive: true, force: true });
  const results: BenchResults = {
    startedAt: new Date(),
    finishedAt: new Date(),
    loadBefore: os.loadavg(),
    loadAfter: [],
    settings,
    graphqlAvailable: false,
    rows: {},
    notes: [],
  };
  const { durationS, warmupS, connections } = settings;
  log(`settings: ${JSON.stringify({ ...settings, only: [...settings.only] })}`);

  // Prism takes ~15 s to start: begin now, while the rest is set up (nothing is measured yet).
  const prismStarting = want('prism') ? startPrism() : null;
  prismStarting?.catch(() => undefined);

  const db = await startDatabase({ dataDir: settings.dataDir, profile: settings.profile, compiled: settings.compiled });
  log(`database process ${db.child.pid} at ${db.url}`);

  const restKeys: RowKey[] = ['express', 'get', 'list', 'graphql', 'graphqlOne', 'insert', 'post', 'prism', 'find'];
  if (restKeys.some(want)) {
    const gw = await startGatewayProcess({ mongodbUri: db.url, profile: settings.profile, compiled: settings.compiled || settings.gatewayTree !== undefined, tree: settings.gatewayTree, name: 'gateway-rest' });
    log(`gateway process ${gw.child.pid} at ${gw.url}`);
    const account = await createAccount(gw.url, 'bench rest');
    const auth = { authorization: `Bearer ${account.sk}` };
    const watch = { gateway: gw.child.pid, db: db.child.pid };
    // The gateway rows' commands and writes per request, read from the database's serverStatus.
    const dbCounters = await openDbCounters(db.url);
    results.graphqlAvailable = await graphqlServed(gw, account.sk);
    const seeded = await pool(Array.from({ length: 200 }, (_, i) => i), 20, async () => (await createReferenceIntent(account.api)).id);
    const graphqlIntent = results.graphqlAvailable && want('graphql') ? await intentWithRefunds(account) : null;
    log(`seeded ${seeded.length} intents; GraphQL ${results.graphqlAvailable ? 'served' : 'not served (rows skipped)'}`);

    /**
     * Rows that are compared with each other run in turns, `slices` slices each (order reversed every
     * round), rather than one after the other: a change in what else the machine is doing then weighs
     * on a row and its baseline alike, and the ratio between them holds (bench/README.md, "Method").
     */
    const interleaved = async (rows: Array<{ key: RowKey; label: string; run: (durationS: number, warmupS: number) => Promise<Measure> }>) => {
      const active = rows.filter((r) => want(r.key));
      const slices = new Map<RowKey, Measure[]>(active.map((r) => [r.key, []]));
      const sliceS = Math.round((durationS / settings.slices) * 10) / 10;
      log(`${active.map((r) => r.label).join(' | ')}: ${settings.slices} slices of ${sliceS} s each, in turns`);
      for (let i = 0; i < settings.slices; i++) {
        for (const r of i % 2 === 0 ? active : [...active].reverse()) {
          // Every slice after the first starts with a moment of its own load, unmeasured: what the row before
          // left (its log flush, its garbage) is then not charged to this one (HISTORY.md, "Issue 60, second pass").
          slices.get(r.key)!.push(await r.run(sliceS, i === 0 ? warmupS : settings.sliceWarmupS));
        }
      }
      for (const r of active) {
        const m = mergeSlices(slices.get(r.key)!);
        results.rows[r.key] = m;
        const cpu = Object.entries(m.cpuPerOp ?? {}).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ');
        const dbOps = m.dbPerOp ? `; db commands/op ${m.dbPerOp.commands.toFixed(2)}, writes/op ${m.dbPerOp.writes.toFixed(2)}` : '';
        log(`  ${r.label}: ${m.rps.toFixed(0)}/s  p50 ${m.p50.toFixed(1)} ms  p99 ${m.p99.toFixed(1)} ms  errors ${m.errors}${m.errors ? ` (${m.note})` : ''}; CPU ms/op: ${cpu}${dbOps}`);
      }
    };
    const http = (url: string, requests: RequestSpec[], watchPids: Record<string, number>, counters?: DbCounterReader) => (d: number, w: number) =>
      runHttpRow({ url, connections, durationS: d, warmupS: w, requests, watch: watchPids, dbCounters: counters });
    /** A gateway row: its CPU and the database's, and the database's commands and writes per request. */
    const gatewayRow = (requests: RequestSpec[]) => http(gw.url, requests, watch, dbCounters);

    const express = want('express') ? await startExpressBaseline() : null;
    let graphqlBody: string | null = null;
    if (graphqlIntent) {
      graphqlBody = JSON.stringify({ query: GRAPHQL_DETAIL_QUERY, variables: { id: graphqlIntent } });
      const check = await new Api(gw.url, account.sk).request('POST', '/graphql', JSON.parse(graphqlBody));
      const refunds = (check.body as any)?.data?.paymentIntent?.refundsConnection?.nodes?.length;
      if (check.status !== 200 || (check.body as any)?.errors) results.notes.push(`GraphQL check answered ${check.status} ${JSON.stringify(check.body).slice(0, 200)}`);
      else log(`  GraphQL intent has ${refunds} refunds and ${(check.body as any).data.paymentIntent.eventsConnection.nodes.length} events`);
    }
    // The same 200 intents as the GET row, one body each, in turn.
    const graphqlOneBodies = results.graphqlAvailable && want('graphqlOne') ? seeded.map((id) => JSON.stringify({ query: GRAPHQL_ONE_QUERY, variables: { id } })) : null;
    if (graphqlOneBodies) {
      const check = await new Api(gw.url, account.sk).request('POST', '/graphql', JSON.parse(graphqlOneBodies[0]!));
      if (check.status !== 200 || (check.body as any)?.errors) results.notes.push(`GraphQL one-intent check answered ${check.status} ${JSON.stringify(check.body).slice(0, 200)}`);
    }
    const graphqlHeaders = { ...auth, 'content-type': 'application/json' };
    try {
      await interleaved([
        ...(express ? [{ key: 'express' as const, label: 'baseline: bare Express 5', run: http(express.url, [{ method: 'GET', path: '/v1/ping' }], { server: express.child.pid }) }] : []),
        { key: 'get', label: 'GET /v1/payment_intents/{id}', run: gatewayRow([rotatingPaths(seeded.map((id) => `/v1/payment_intents/${id}`), auth)]) },
        ...(graphqlBody
          ? [{ key: 'graphql' as const, label: 'POST /graphql (detail page: intent + refunds + events, every field)', run: gatewayRow([{ method: 'POST', path: '/graphql', headers: graphqlHeaders, body: graphqlBody }]) }]
          : []),
        ...(graphqlOneBodies
          ? [{ key: 'graphqlOne' as const, label: "POST /graphql (one intent, REST's fields)", run: gatewayRow([rotatingBodies('/graphql', graphqlOneBodies, graphqlHeaders)]) }]
          : []),
      ]);
    } finally {
      await express?.stop();
    }
    // Compared with no other row, so not in the turns above: there its slices left a list's garbage and
    // log entries (bodies of 25 payments) for the GET slice after them to collect and write
    // (bench/HISTORY.md, "Issue 60, second pass").
    await interleaved([{ key: 'list', label: 'GET /v1/payment_intents?limit=25', run: gatewayRow([{ method: 'GET', path: '/v1/payment_intents?limit=25', headers: auth }]) }]);

    const raw = restKeys.some((k) => (k === 'insert' || k === 'find') && want(k)) ? await openRawDriverBench(db.url) : null;
    const postBody = JSON.stringify(CREATE_INTENT_BODY);
    const postHeaders = { ...auth, 'content-type': 'application/json' };
    const prism = prismStarting ? await prismStarting : null;
    try {
      await interleaved([
        { key: 'insert', label: 'baseline: driver insertOne', run: (d, w) => raw!.insertOne({ concurrency: connections, durationS: d, warmupS: w, watch: { db: db.child.pid } }) },
        { key: 'post', label: 'POST /v1/payment_intents', run: gatewayRow([uniqueKeyRequest({ method: 'POST', path: '/v1/payment_intents', headers: postHeaders, body: postBody })]) },
        ...(prism
          ? [{ key: 'prism' as const, label: 'baseline: Prism mock of POST /payment_intents', run: http(prism.url, [uniqueKeyRequest({ method: 'POST', path: '/payment_intents', headers: postHeaders, body: postBody })], { server: prism.child.pid }) }]
          : []),
        { key: 'find', label: 'baseline: driver findOne', run: (d, w) => raw!.findOne({ concurrency: connections, durationS: d, warmupS: w, watch: { db: db.child.pid } }) },
      ]);
    } finally {
      await prism?.stop();
    }
    await raw?.close();
    await dbCounters.close();
    await gw.stop();
  }
  // Prism is stopped by the REST phase; when that phase did not run, here.
  if (prismStarting && !restKeys.some(want)) await (await prismStarting).stop();

  // What refusing costs: a costly GraphQL document is refused in a few ms of CPU whatever its aliases
  // (issue 54, "refuse early"), set against an accepted trivial query on the same gateway.
  if (want('refusals')) {
    const gw = await startGatewayProcess({ mongodbUri: db.url, profile: settings.profile, compiled: settings.compiled, name: 'gateway-refusals' });
    try {
      const account = await createAccount(gw.url, 'bench refusals');
      log('refusals: costly 50 KB GraphQL documents, one request at a time');
      results.refusals = await measureRefusals({ url: gw.url, pid: gw.child.pid }, account.sk, { durationS: Math.min(durationS, 8), minRequests: 20, docBytes: 50_000 }, (m) => log(`  ${m}`));
    } finally {
      await gw.stop();
    }
  }

  /**
   * Every subscriber comes from this one machine with one key: the per-key and per-IP caps on long-lived
   * connections (docs/api.md, with their variables) are raised to the bench's scale, as startGatewayProcess
   * raises the rate limits. Left at their defaults they admitted 100 SSE streams and 20 WebSockets of 4,000.
   */
  const fanoutPhase = async (name: string, subscribers: number, workers: number, kinds: readonly SubscriberKind[]) => {
    // Twice the subscribers of every kind: the three HTTP kinds share the event streams' caps, and a
    // payment's share of subscribers is rounded up (2,500 over 200 payments: 13 each, 2,600).
    const connectionCaps = String(2 * kinds.length * subscribers);
    const gw = await startGatewayProcess({
      mongodbUri: db.url,
      profile: settings.profile,
      compiled: settings.compiled,
      name,
      // For the full collection before each RSS reading (bench/lib/inspector.ts).
      nodeArgs: [INSPECT_FLAG],
      env: {
        SSE_MAX_STREAMS_PER_KEY: connectionCaps,
        SSE_MAX_STREAMS_PER_IP: connectionCaps,
        HTTP_MAX_CONNECTIONS_PER_IP: '0', // every subscriber and writer is on 127.0.0.1
        WS_MAX_CONNECTIONS_PER_KEY: connectionCaps,
        WS_MAX_CONNECTIONS_PER_IP: connectionCaps,
        WS_MAX_SUBSCRIPTIONS_PER_KEY: connectionCaps,
      },
    });
    try {
      const account = await createAccount(gw.url, 'bench probe');
      const graphql = await graphqlServed(gw, account.sk);
      results.graphqlAvailable ||= graphql;
      // Without GraphQL only the REST streams can be measured.
      const measured = graphql ? kinds : kinds.filter((k) => k === 'sse');
      log(`fan-out: ${subscribers} each of ${measured.join(', ')}${graphql ? '' : ' (GraphQL not served)'} on gateway ${gw.child.pid}, ${workers} client processes`);
      const fo = await runFanout(gw, { ...settings, subscribers, fanoutWorkers: workers }, measured, log);
      const perK = (b: number) => (b / 2 ** 20).toFixed(1);
      log(`  fan-out p50 ${fo.all.p50.toFixed(1)} ms p99 ${fo.all.p99.toFixed(1)} ms, missed ${fo.all.missed}`);
      for (const k of fo.kinds) log(`  ${k.kind}: ${k.open} open, p99 ${k.latency.p99.toFixed(1)} ms, missed ${k.latency.missed}, RSS/1000 ${perK(k.perThousand)} MiB`);
      log(`  cancel request p50 ${fo.trigger.p50.toFixed(1)} ms p99 ${fo.trigger.p99.toFixed(1)} ms; updated_at -> receipt p50 ${fo.sinceChange.p50.toFixed(1)} ms p99 ${fo.sinceChange.p99.toFixed(1)} ms`);
      return fo;
    } finally {
      await gw.stop();
    }
  };
  if (want('fanout')) results.fanout = await fanoutPhase('gateway-fanout', settings.subscribers, settings.fanoutWorkers, ['sse', 'ws']);
  if (want('fanout10k')) {
    // Each connection is a descriptor in the gateway and one in a client process; both inherit this limit.
    const limit = Number(/Max open files\s+(\d+)/.exec(fs.readFileSync('/proc/self/limits', 'utf8'))?.[1] ?? Infinity);
    const needed = settings.largeKinds.length * settings.largeSubscribers + 1_000;
    if (limit < needed) results.notes.push(`open files limit ${limit} is below the ${needed} the 10,000 row needs in the gateway: raise it (ulimit -n) before npm run bench`);
  }
  if (want('fanout10k')) results.fanoutLarge = await fanoutPhase('gateway-fanout-10k', settings.largeSubscribers, settings.largeFanoutWorkers, settings.largeKinds);

  if (want('webhooks')) {
    const gw = await startGatewayProcess({ mongodbUri: db.url, profile: settings.profile, compiled: settings.compiled, name: 'gateway-webhooks' });
    log(`webhooks: ${settings.webhookEvents} events to a local receiver`);
    results.webhooks = await runWebhooks(gw, settings, log);
    const w = results.webhooks;
    log(`  delivered ${w.delivered}/${w.events} at ${w.deliveredPerSecond.toFixed(0)}/s, lag p50 ${w.lagP50.toFixed(1)} ms p99 ${w.lagP99.toFixed(1)} ms`);
    log(`  the creations took p50 ${w.createP50.toFixed(1)} ms p99 ${w.createP99.toFixed(1)} ms`);
    await gw.stop();
  }

  await db.stop();
  results.finishedAt = new Date();
  results.loadAfter = os.loadavg();
  const out = process.env.BENCH_OUT ? path.resolve(process.env.BENCH_OUT) : path.join(ROOT, 'bench/RESULTS.md');
  fs.writeFileSync(out, renderResults(results));
  fs.writeFileSync(path.join(TMP, 'results.json'), JSON.stringify(results, null, 2));
  log(`wrote ${path.relative(ROOT, out)}`);
  console.log(`\n${renderResults(results).split('## Request/response rows')[0]}`);

  if (settings.profile) {
    // One directory per process; its busiest thread's profile is the one worth reading.
    for (const name of fs.readdirSync(PROFILE_DIR)) {
      const dir = path.join(PROFILE_DIR, name);
      if (!fs.statSync(dir).isDirectory()) continue;
      const files = fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
      const summaries = files.map((f) => ({ f, s: summarizeProfile(path.join(dir, f)) })).sort((a, b) => b.s.totalMs - a.s.totalMs);
      if (!summaries[0]) continue;
      const out = path.join(PROFILE_DIR, `${name}.txt`);
      fs.writeFileSync(out, formatSummary(`${name}/${summaries[0].f}`, summaries[0].s, 30));
      log(`profile summary: ${path.relative(ROOT, out)}`);
    }
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    killAllChildren();
    process.exit(1);
  },
);
