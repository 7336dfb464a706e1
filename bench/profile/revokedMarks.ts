/**
 * What revocation marks cost the account that holds them: `GET /v1/account` timed one request at a time
 * for an account whose document holds MARKS revocation marks (`revoked_keys.<key id>`, seeded directly)
 * and for a plain account beside it, alternately. 86,400 is a day of creating and revoking keys at the
 * 60 a minute a secret key's rate limit allows, which the marks reached before they were pruned; 360 is
 * what pruning leaves at that pace (6 minutes of marks). Every request of an account reads and writes
 * its document (the rate-limit count), so the engine decodes, encodes and journals all of it each time.
 *
 *   DB_PORT=27991 npx embedded-mongo &            # in a scratch directory (it writes ./data)
 *   MONGODB_URI='mongodb://127.0.0.1:27991/?directConnection=true' WEBHOOK_SECRETS_KEY=<32 bytes, base64> PORT=3999 npm start &
 *   GW=http://127.0.0.1:3999 MONGODB_URI='mongodb://127.0.0.1:27991/?directConnection=true' MARKS=86400 npx tsx bench/profile/revokedMarks.ts
 */
import mongoose from 'mongoose';
import { createAccount } from '../lib/api';
import { percentile } from '../lib/stats';

const base = process.env.GW!;
const N = Number(process.env.MARKS ?? 86_400);

/** `GET /v1/account` 300 times, one at a time: latencies in ms. */
async function time(sk: string, n = 300): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const r = await fetch(`${base}/v1/account`, { headers: { authorization: `Bearer ${sk}` } });
    await r.arrayBuffer();
    out.push(performance.now() - t);
  }
  return out;
}
const plain = await createAccount(base, 'plain');
const churned = await createAccount(base, 'churned');
await mongoose.connect(process.env.MONGODB_URI!);
const marks: Record<string, Date> = {};
for (let i = 0; i < N; i++) marks[`revoked_keys.key_${String(i).padStart(24, '0')}`] = new Date();
await mongoose.connection.collection('accounts').updateOne({ _id: churned.id as never }, { $set: marks });
console.log('marks', N);
for (const [name, a] of [['plain', plain], ['churned', churned], ['plain', plain], ['churned', churned]] as const) {
  const t = await time(a.sk);
  console.log(name, 'GET /v1/account p50', percentile(t, 50).toFixed(1), 'ms p95', percentile(t, 95).toFixed(1), 'ms');
}
await mongoose.disconnect();
