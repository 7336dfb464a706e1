/**
 * Where the gateway's memory goes per stored payment: an in-process gateway (embedded engine in memory)
 * grown to 1,000 then 4,000 payments (three in four reference, one in four express 923000001); prints
 * RSS and V8 heap after a full GC at each size, the growth per 1,000 payments, and the BSON bytes each
 * collection holds per payment. MEMPROBE_SNAPSHOT=<file> also writes a heap snapshot at the end.
 *
 *   node --expose-gc --max-semi-space-size=64 --import tsx bench/profile/memoryPerPayment.mts
 */
import mongoose from 'mongoose';
import { BSON } from 'bson';
import { loadConfig } from '../../src/config';
import { startGateway } from '../../src/server';
import { Api } from '../lib/api';

const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '100000000', ACCOUNT_CREATION_PER_MINUTE: '100000000', PUBLIC_RATE_LIMIT_PER_MINUTE: '100000000', MONGODB_URI: '' });
const gw = await startGateway(config);
const a = await new Api(gw.url).must<{ sk: string }>(201, 'POST', '/v1/sandbox/accounts', { name: 'm' });
const api = new Api(gw.url, a.sk);
let n = 0;
async function grow(to: number) {
  const jobs = [];
  for (let w = 0; w < 16; w++) jobs.push((async () => { while (n < to) { const i = n++; await api.must(201, 'POST', '/v1/payment_intents', i % 4 === 3 ? { amount: 1000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000001' } } : { amount: 1000, currency: 'AOA', payment_method: 'multicaixa_reference' }, { 'idempotency-key': `memprobe-${i}` }); } })());
  await Promise.all(jobs);
  await new Promise((r) => setTimeout(r, 7000));
}
function mem() { global.gc?.(); global.gc?.(); const m = process.memoryUsage(); return { rss: m.rss / 2 ** 20, heap: m.heapUsed / 2 ** 20, ext: m.external / 2 ** 20, ab: m.arrayBuffers / 2 ** 20 }; }
await grow(1000); const m1 = mem();
await grow(4000); const m2 = mem();
console.log(JSON.stringify({m1, m2}), 'per 1000: rss', ((m2.rss - m1.rss) / 3).toFixed(1), 'heap', ((m2.heap - m1.heap) / 3).toFixed(1));
const db = mongoose.connection.db!;
for (const c of await db.listCollections().toArray()) {
  const docs = await db.collection(c.name).find({}).toArray();
  const bytes = docs.reduce((s, d) => s + BSON.calculateObjectSize(d), 0);
  console.log(c.name.padEnd(24), String(docs.length).padStart(7), (bytes / 2 ** 20).toFixed(2), 'MiB BSON', (bytes / 4000).toFixed(0), 'B/payment');
}
if (process.env.MEMPROBE_SNAPSHOT) { const v8 = await import('node:v8'); console.log('snapshot', v8.writeHeapSnapshot(process.env.MEMPROBE_SNAPSHOT)); }
await gw.close();
process.exit(0);
