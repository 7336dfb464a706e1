/**
 * How fast the durable timers drain a backlog, and how late they fire. An in-process gateway (embedded
 * engine in memory, or MONGODB_URI).
 *
 * Payments (default): N express payments with 923000001 (PROCESSING at +2 s, FAILED at +5 s), then the
 * FAILED count every 5 s until every payment is final (or `BENCH_DRAIN_WAIT_S` runs out); printed: the
 * create rate, the drain, the lateness of `updated_at` against created_at + 5 s, the rail timers' own
 * lateness (claimed_at - fire_at) and the CPU this process spent per payment.
 * - closed loop: created as fast as `BENCH_DRAIN_CONCURRENCY` requests in flight allow;
 * - open loop (`BENCH_DRAIN_RATE=300`): one create every 1/rate s whatever the answers, as clients do.
 * `PGW_QUERY_SHAPES=<dir>` turns on the driver's command monitoring: the database commands per payment
 * are then counted by command and collection. (Webhook lateness at a sustained rate: `npm run bench:rail`.)
 *
 * Timers only (`BENCH_DRAIN_TIMERS=50000`): that many timers with a handler that does nothing, made due
 * at the same moment; printed: how fast the service runs them and how late (the timer service's own
 * cost, whatever the rest of the gateway costs).
 *
 *   LOG_LEVEL=warn BENCH_DRAIN_PAYMENTS=8000 npx tsx bench/profile/timerDrain.ts
 *   LOG_LEVEL=warn BENCH_DRAIN_PAYMENTS=6000 BENCH_DRAIN_RATE=200 npx tsx bench/profile/timerDrain.ts
 *   LOG_LEVEL=warn BENCH_DRAIN_TIMERS=50000 npx tsx bench/profile/timerDrain.ts
 */
import mongoose from 'mongoose';
import { loadConfig } from '../../src/config';
import { startGateway } from '../../src/server';
import type { TimerRegistry } from '../../src/platform/timers/timerService';
import { newTimerRecord } from '../../src/platform/timers/timerModel';
import { Api } from '../lib/api';
import { percentile, sleep } from '../lib/stats';

const N = Number(process.env.BENCH_DRAIN_PAYMENTS ?? 8000);
const CONCURRENCY = Number(process.env.BENCH_DRAIN_CONCURRENCY ?? 32);
const RATE = Number(process.env.BENCH_DRAIN_RATE ?? 0);
const WAIT_S = Number(process.env.BENCH_DRAIN_WAIT_S ?? 120);
const BACKLOG = Number(process.env.BENCH_DRAIN_TIMERS ?? 0);
const EXPRESS_FAILS = { currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000001' } };

function line(label: string, ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  return `${label} (ms): p50 ${percentile(s, 50)}, p99 ${percentile(s, 99)}, max ${s.at(-1)} (n=${s.length})`;
}

async function createAll(api: Api, tag: string): Promise<void> {
  const create = (i: number) =>
    api.must(201, 'POST', '/v1/payment_intents', { amount: 1000 + i, ...EXPRESS_FAILS }, { 'idempotency-key': `drain-${tag}-${i}` });
  if (RATE > 0) {
    const t0 = Date.now();
    const inFlight: Array<Promise<unknown>> = [];
    for (let i = 0; i < N; i++) {
      const wait = t0 + (i * 1000) / RATE - Date.now();
      if (wait > 0) await sleep(wait);
      inFlight.push(create(i));
    }
    await Promise.all(inFlight);
    return;
  }
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < N) await create(next++);
    }),
  );
}

async function main(): Promise<void> {
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    RATE_LIMIT_PER_MINUTE: '100000000',
    ACCOUNT_CREATION_PER_MINUTE: '100000000',
    PUBLIC_RATE_LIMIT_PER_MINUTE: '100000000',
    MONGODB_URI: process.env.MONGODB_URI ?? '',
    WEBHOOK_SECRETS_KEY: process.env.WEBHOOK_SECRETS_KEY ?? '',
  });
  const gw = await startGateway(config);
  const commands = new Map<string, number>();
  mongoose.connection.getClient().on('commandStarted', (e) => {
    const key = `${e.commandName} ${String(e.command[e.commandName])}`;
    commands.set(key, (commands.get(key) ?? 0) + 1);
  });
  try {
    if (BACKLOG > 0) return await drainBacklog(gw.runtime.timers, BACKLOG);
    const anon = new Api(gw.url);
    const acct = await anon.must<{ sk: string }>(201, 'POST', '/v1/sandbox/accounts', { name: 'drain' });
    const api = new Api(gw.url, acct.sk);
    const t0 = Date.now();
    const cpu0 = process.cpuUsage();
    await createAll(api, String(t0));
    const created = Date.now();
    const mode = RATE > 0 ? `open loop at ${RATE}/s` : `closed loop, ${CONCURRENCY} in flight`;
    console.log(`created ${N} express payments in ${((created - t0) / 1000).toFixed(1)} s (${Math.round(N / ((created - t0) / 1000))}/s, ${mode})`);
    const payments = mongoose.connection.collection('payment_intents');
    const deadline = Date.now() + WAIT_S * 1000;
    let failed = 0;
    for (;;) {
      failed = await payments.countDocuments({ status: 'FAILED' });
      console.log(`+${((Date.now() - created) / 1000).toFixed(0)} s after the last create: ${failed} FAILED`);
      if (failed >= N || Date.now() > deadline) break;
      await sleep(5000);
    }
    const done = Date.now();
    const cpu = process.cpuUsage(cpu0);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    console.log(`CPU of this process (gateway, engine, client): ${(cpuMs / N).toFixed(2)} ms per payment, ${Math.round((100 * cpuMs) / (done - t0))} % of one core`);
    const docs = await payments.find({ status: 'FAILED' }, { projection: { created_at: 1, updated_at: 1 } }).toArray();
    console.log(`final: ${failed}/${N} FAILED; whole run ${((done - t0) / 1000).toFixed(1)} s`);
    console.log(line('FAILED updated_at vs created_at + 5 s', docs.map((d) => new Date(d.updated_at).getTime() - new Date(d.created_at).getTime() - 5000)));
    const timers = await mongoose.connection
      .collection('timers')
      .find({ state: 'done', kind: 'payment.rail_step' }, { projection: { fire_at: 1, claimed_at: 1 } })
      .toArray();
    console.log(line('rail timers claimed_at vs fire_at', timers.map((t) => new Date(t.claimed_at).getTime() - t.fire_at)));
    if (commands.size > 0) {
      console.log('database commands per payment:');
      for (const [k, n] of [...commands].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`  ${(n / N).toFixed(2)}  ${k}`);
    }
  } finally {
    await gw.close();
  }
}

/** Timers only: `n` no-op timers stored an hour away, then all made due at once; waits until every one ran. */
async function drainBacklog(gatewayTimers: TimerRegistry, n: number): Promise<void> {
  const ranAt: number[] = [];
  let allRan: () => void = () => {};
  const finished = new Promise<void>((r) => (allRan = r));
  gatewayTimers.register('bench.noop', async () => {
    if (ranAt.push(Date.now()) === n) allRan();
  });
  const timers = mongoose.connection.collection('timers');
  const later = Date.now() + 3_600_000;
  const run = Date.now().toString(36);
  for (let i = 0; i < n; i += 5_000) {
    await timers.insertMany(
      Array.from({ length: Math.min(5_000, n - i) }, (_, j) =>
        newTimerRecord({ id: `tmr_bench_${run}_${i + j}`, accountId: null, kind: 'bench.noop', refId: `ref_bench_${i + j}`, dueAt: new Date(later), fireAt: later, offsetMs: 0 }),
      ) as never[],
    );
  }
  const due = Date.now();
  const cpu0 = process.cpuUsage();
  await timers.updateMany({ kind: 'bench.noop', state: 'scheduled' }, { $set: { fire_at: due } });
  await Promise.race([finished, sleep(WAIT_S * 1000)]);
  const cpu = process.cpuUsage(cpu0);
  const last = ranAt.at(-1) ?? due;
  console.log(`${ranAt.length}/${n} no-op timers ran in ${((last - due) / 1000).toFixed(1)} s after they became due: ${Math.round(ranAt.length / ((last - due) / 1000))} timers/s`);
  console.log(`CPU of this process: ${((cpu.user + cpu.system) / 1000 / Math.max(1, ranAt.length)).toFixed(3)} ms per timer`);
  console.log(line('ran vs fire_at', ranAt.map((t) => t - due)));
}

await main();
process.exit(0);
