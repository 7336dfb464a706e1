/**
 * How fast the durable timers drain a backlog: an in-process gateway (embedded engine in memory), N
 * express payments with 923000001 (PROCESSING at +2 s, FAILED at +5 s) created as fast as
 * `BENCH_DRAIN_CONCURRENCY` requests in flight allow, then the FAILED count polled until every
 * payment is final (or `BENCH_DRAIN_WAIT_S` runs out). Prints the create rate, the drain rate and the
 * lateness of `updated_at` against created_at + 5 s.
 *
 *   BENCH_DRAIN_PAYMENTS=8000 npx tsx bench/profile/timerDrain.ts
 */
import mongoose from 'mongoose';
import { loadConfig } from '../../src/config';
import { startGateway } from '../../src/server';
import { Api } from '../lib/api';

const N = Number(process.env.BENCH_DRAIN_PAYMENTS ?? 8000);
const CONCURRENCY = Number(process.env.BENCH_DRAIN_CONCURRENCY ?? 32);
const WAIT_S = Number(process.env.BENCH_DRAIN_WAIT_S ?? 120);

function pct(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : NaN;
}

async function main(): Promise<void> {
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '100000000',
    ACCOUNT_CREATION_PER_MINUTE: '100000000',
    PUBLIC_RATE_LIMIT_PER_MINUTE: '100000000',
    MONGODB_URI: process.env.MONGODB_URI ?? '',
  });
  const gw = await startGateway(config);
  try {
    const anon = new Api(gw.url);
    const acct = await anon.must<{ sk: string }>(201, 'POST', '/v1/sandbox/accounts', { name: 'drain' });
    const api = new Api(gw.url, acct.sk);
    const t0 = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < N) {
          const i = next++;
          await api.must(201, 'POST', '/v1/payment_intents', { amount: 1000 + i, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000001' } }, { 'idempotency-key': `drain-${t0}-${i}` });
        }
      }),
    );
    const created = Date.now();
    console.log(`created ${N} express payments in ${((created - t0) / 1000).toFixed(1)} s (${Math.round(N / ((created - t0) / 1000))}/s)`);
    const payments = mongoose.connection.collection('payment_intents');
    const deadline = Date.now() + WAIT_S * 1000;
    let failed = 0;
    for (;;) {
      failed = await payments.countDocuments({ status: 'FAILED' });
      const s = ((Date.now() - created) / 1000).toFixed(0);
      console.log(`+${s} s after the last create: ${failed} FAILED`);
      if (failed >= N || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 5000));
    }
    const done = Date.now();
    const docs = await payments.find({ status: 'FAILED' }, { projection: { created_at: 1, updated_at: 1 } }).toArray();
    const late = docs.map((d) => new Date(d.updated_at).getTime() - new Date(d.created_at).getTime() - 5000).sort((a, b) => a - b);
    console.log(`final: ${failed}/${N} FAILED; whole run ${((done - t0) / 1000).toFixed(1)} s`);
    console.log(`FAILED lateness vs created_at + 5 s (ms): p50 ${pct(late, 50)}, p99 ${pct(late, 99)}, max ${late.at(-1)}`);
  } finally {
    await gw.close();
  }
}

await main();
process.exit(0);
