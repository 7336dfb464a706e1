import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import mongoose from 'mongoose';
import { loadConfig } from '../../src/config';
import { startGateway } from '../../src/server';
import { Api, CREATE_INTENT_BODY, createAccount, createReferenceIntent, idempotencyKey, type BenchAccount } from '../lib/api';
import { GRAPHQL_ONE_QUERY } from '../lib/graphqlQueries';
import { BENCH_WEBHOOK_SECRETS_KEY, startDatabase } from '../lib/services';
import { cpuMs } from '../lib/processes';
import { sleep } from '../lib/stats';

/**
 * Counts the database commands behind each request: `npx tsx bench/profile/dbCommands.ts`.
 * Starts the database in its own process and a gateway in this one with driver command monitoring,
 * measures the idle background rate, then runs each operation N times one after the other and prints
 * the commands per request (background commands seen meanwhile are subtracted pro rata), with the CPU
 * per request of this process (gateway and client) and of the database's, with the idle background's
 * share of it. `C=50` runs
 * them 50 at a time instead. The last row is an express payment's whole life, from its POST to its
 * `payment.succeeded` webhook received at +5 s (LIFE_N lives, C at a time, over LIFE_ACCOUNTS accounts;
 * `LIFE_ONLY=1` runs that row alone).
 */
const N = Number(process.env.N ?? 50);
/** Requests in flight (C=50 shows how the batching in src/db/batching.ts shares commands). */
const C = Math.max(1, Number(process.env.C ?? 1));
/** Express lives for the last row: each takes 5 s, so C=1 runs few (default 10, or 2 waves of C). */
const LIFE_N = Number(process.env.LIFE_N ?? (C === 1 ? 10 : 2 * C));
const LIFE_ONLY = process.env.LIFE_ONLY === '1';
/**
 * Accounts the express lives are spread over, each with its own key and webhook endpoint (bench:rail
 * uses 10): commands that serve one key or account at a time (the rate-limit counts) show here.
 */
const LIFE_ACCOUNTS = Math.max(1, Number(process.env.LIFE_ACCOUNTS ?? 1));

/** Runs job(0..n-1), C at a time. */
async function times(n: number, job: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(C, n) }, async () => {
    while (next < n) await job(next++);
  }));
}

const db = await startDatabase({ dataDir: '', profile: false });
// The gateway turns the driver's command monitoring on only while it records query shapes
// (src/db/connection.ts): give it a scratch directory so that the counting below sees every command.
process.env.PGW_QUERY_SHAPES ??= fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-db-commands-'));
const gateway = await startGateway(
  loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    MONGODB_URI: `${db.url}${db.url.includes('?') ? '&' : '?'}monitorCommands=true`,
    WEBHOOK_SECRETS_KEY: BENCH_WEBHOOK_SECRETS_KEY,
    RATE_LIMIT_PER_MINUTE: '100000000',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    ACCOUNT_CREATION_PER_MINUTE: '100000',
  }),
);
let counts = new Map<string, number>();
let recording = false;
mongoose.connection.getClient().on('commandStarted', (e) => {
  if (!recording) return;
  const cmd = e.command as Record<string, unknown>;
  const target = typeof cmd[e.commandName] === 'string' ? `${e.commandName} ${cmd[e.commandName]}` : e.commandName;
  counts.set(target, (counts.get(target) ?? 0) + 1);
});

interface Recorded {
  counts: Map<string, number>;
  ms: number;
  /** CPU ms of this process (the gateway and the requests' client) and of the database process. */
  cpuMs: number;
  dbCpuMs: number;
}

async function record(run: () => Promise<void>): Promise<Recorded> {
  counts = new Map();
  recording = true;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const dbCpu0 = cpuMs(db.child.pid!);
  await run();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const dbCpuMs = cpuMs(db.child.pid!) - dbCpu0;
  recording = false;
  return { counts, ms, cpuMs: (cpu.user + cpu.system) / 1000, dbCpuMs };
}

await sleep(2_000); // start-up work (compilation, index builds) out of the idle rates
const idle = await record(() => sleep(5_000));
const idlePerMs = new Map([...idle.counts].map(([k, v]) => [k, v / idle.ms]));
const show = (label: string, r: Recorded, per: number) => {
  const rows = [...r.counts]
    .map(([k, v]) => [k, (v - (idlePerMs.get(k) ?? 0) * r.ms) / per] as const)
    .filter(([, v]) => v > 0.05)
    .sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((n, [, v]) => n + v, 0);
  // CPU per request as measured, and the idle background's share of it (pollers, change streams): for
  // slow rows (an express life takes 5 s) the share is most of it, and subtracting a rate measured for
  // 5 s on a shared machine would leave noise.
  const cpu = (ms: number, idleMs: number) => `${(ms / per).toFixed(2)} ms (idle share ${(((idleMs / idle.ms) * r.ms) / per).toFixed(2)})`;
  console.log(
    `\n${label}: ${total.toFixed(1)} commands per request (${(r.ms / per).toFixed(2)} ms per request, ${C} in flight; ` +
      `CPU per request: this process ${cpu(r.cpuMs, idle.cpuMs)}, database ${cpu(r.dbCpuMs, idle.dbCpuMs)})`,
  );
  for (const [k, v] of rows) console.log(`  ${v.toFixed(2).padStart(6)}  ${k}`);
};
console.log(`idle background: ${[...idle.counts].map(([k, v]) => `${k} ${((v / idle.ms) * 1000).toFixed(1)}/s`).join(', ') || 'none'}`);

if (!LIFE_ONLY) {
  const account = await createAccount(gateway.url, 'db commands');
  const ids: string[] = [];
  for (let i = 0; i < N; i++) ids.push((await createReferenceIntent(account.api)).id);
  const gql = new Api(gateway.url, account.sk);

  show('POST /v1/payment_intents', await record(async () => {
    await times(N, () => account.api.must(201, 'POST', '/payment_intents', CREATE_INTENT_BODY, { 'idempotency-key': idempotencyKey() }));
  }), N);
  await sleep(1_000);
  show('GET /v1/payment_intents/{id}', await record(async () => {
    await times(N, (i) => account.api.must(200, 'GET', `/payment_intents/${ids[i]}`));
  }), N);
  show('GET /v1/payment_intents?limit=25', await record(async () => {
    await times(N, () => account.api.must(200, 'GET', '/payment_intents?limit=25'));
  }), N);
  show("POST /graphql paymentIntent (REST's fields)", await record(async () => {
    await times(N, (i) => gql.must(200, 'POST', '/graphql', { query: GRAPHQL_ONE_QUERY, variables: { id: ids[i] } }));
  }), N);
  show('POST /graphql paymentIntent { refunds events }', await record(async () => {
    await times(N, (i) =>
      gql.must(200, 'POST', '/graphql', { query: 'query($id: ID!) { paymentIntent(id: $id) { id status refunds { id } events { id type } } }', variables: { id: ids[i] } }),
    );
  }), N);
  show('POST /v1/payment_intents/{id}/cancel', await record(async () => {
    await times(N, (i) => account.api.must(200, 'POST', `/payment_intents/${ids[i]}/cancel`));
  }), N);

  // The same creations with a webhook endpoint listening (payment.created): the difference is the
  // delivery's own database work (delivery record, attempt, outcome).
  const received = new Set<string>();
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.add(String(req.headers['service-event-id']));
      res.end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const hookAccount = await createAccount(gateway.url, 'db commands webhooks');
  await hookAccount.api.must(201, 'POST', '/webhook_endpoints', {
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`,
    events: ['payment.created'],
  });
  show('POST /v1/payment_intents with one webhook endpoint, until every delivery is received', await record(async () => {
    await times(N, () => hookAccount.api.must(201, 'POST', '/payment_intents', CREATE_INTENT_BODY, { 'idempotency-key': idempotencyKey() }));
    while (received.size < N) await sleep(20);
    await sleep(500);
  }), N);
  receiver.close();
}

// An express payment's whole life as the rail bench makes it (bench/rail/rail.ts): the POST, the rail
// steps at +2 s and +5 s, its events, and the `payment.succeeded` webhook to an endpoint of its account,
// counted until that webhook is received (and a moment for the bookkeeping that follows it).
const lifeWaiters = new Map<string, () => void>();
const lifeArrived = new Set<string>();
const lifeReceiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const ev = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; data: { id: string } };
    res.end('ok');
    if (ev.type !== 'payment.succeeded') return;
    lifeArrived.add(ev.data.id);
    lifeWaiters.get(ev.data.id)?.();
  });
});
await new Promise<void>((r) => lifeReceiver.listen(0, '127.0.0.1', r));
const lifeAccounts: BenchAccount[] = [];
for (let i = 0; i < LIFE_ACCOUNTS; i++) {
  const lifeAccount = await createAccount(gateway.url, `db commands express life ${i}`);
  await lifeAccount.api.must(201, 'POST', '/webhook_endpoints', {
    url: `http://127.0.0.1:${(lifeReceiver.address() as AddressInfo).port}/hooks`,
    events: ['payment.succeeded'],
  });
  lifeAccounts.push(lifeAccount);
}
const EXPRESS_BODY = { amount: 1_000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000000' } };
show(`Express payment, POST to payment.succeeded received (+5 s), over ${LIFE_ACCOUNTS} account(s)`, await record(async () => {
  await times(LIFE_N, async (i) => {
    const lifeAccount = lifeAccounts[i % LIFE_ACCOUNTS]!;
    const p = await lifeAccount.api.must<{ id: string }>(201, 'POST', '/payment_intents', EXPRESS_BODY, { 'idempotency-key': idempotencyKey() });
    if (!lifeArrived.has(p.id)) await new Promise<void>((r) => lifeWaiters.set(p.id, r));
  });
  await sleep(500);
}), LIFE_N);
lifeReceiver.close();

await gateway.close();
await db.stop();
process.exit(0);
