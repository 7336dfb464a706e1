/**
 * The index-heavy operations of the engine, in process and without the wire, in CPU time per operation
 * (less sensitive to a loaded machine than wall-clock rates): inserts into a collection with the
 * gateway's kind of indexes, look-ups by a unique key, sort+limit walks of an equality prefix, an
 * equality prefix then a range, and replacements that move a document's keys.
 *
 *   npx tsx packages/embedded-mongo/bench/index-ops.ts        (BENCH_DOCS, default 50000)
 */
import { Collection } from '../src/collection';
import type { Doc } from '../src/values';

const N = Number(process.env.BENCH_DOCS ?? 50_000);
const ACCOUNTS = ['acct_iUNjGxLjoFQbZpSQGIEL1NPr', 'acct_x8sjdJSKdj2ksjdKSJDks9sd'];

const c = new Collection('bench', 'payments');
c.createIndex({ key: { account_id: 1, seq: -1 }, name: 'account_seq' });
c.createIndex({ key: { account_id: 1, status: 1, seq: -1 }, name: 'account_status_seq' });
c.createIndex({ key: { 'reference.number': 1 }, name: 'reference', unique: true, sparse: true });
c.createIndex({ key: { state: 1, fire_at: 1 }, name: 'state_fire_at' });

function payment(i: number, status: string): Doc {
  return {
    _id: `pay_${(i * 2654435761) % 1e9}_${i}`,
    account_id: ACCOUNTS[i % 2],
    seq: i,
    status,
    reference: { number: String(100_000_000 + i) },
    state: 'scheduled',
    fire_at: new Date(1.7e12 + (i % 977) * 1000),
    amount: 1000 + i,
  };
}

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

function row(name: string, ops: number, fn: () => void): void {
  const t = cpuMs();
  fn();
  console.log(`| ${name.padEnd(36)} | ${(((cpuMs() - t) * 1000) / ops).toFixed(2).padStart(8)} |`);
}

const index = (name: string) => c.indexes.get(name)!;
console.log(`${N} documents\n| operation                            | CPU µs/op |\n|---|---|`);
row('insertOne (4 secondary indexes)', N, () => {
  for (let i = 0; i < N; i++) c.insert(payment(i, 'pending'));
});
row('look-up by unique key', N, () => {
  for (let i = 0; i < N; i++) for (const id of index('reference').idsWithKey([String(100_000_000 + ((i * 7) % N))])) if (!id) throw new Error('no id');
});
const SCANS = Math.max(1, N / 10);
row('sort+limit 20 in an equality prefix', SCANS, () => {
  for (let i = 0; i < SCANS; i++) {
    let k = 0;
    for (const e of index('account_seq').scanPrefix([ACCOUNTS[i % 2]], false)) if (e.id && ++k === 20) break;
  }
});
row('prefix + range, first 50', SCANS, () => {
  for (let i = 0; i < SCANS; i++) {
    let k = 0;
    const lo = { value: new Date(1.7e12 + (i % 900) * 1000), inclusive: true };
    for (const e of index('state_fire_at').scanRange(lo, undefined, ['scheduled'])) if (e.id && ++k === 50) break;
  }
});
row('replace (status changes)', N, () => {
  for (let i = 0; i < N; i++) {
    const next = payment(i, 'succeeded');
    const id = next._id as string;
    c.replace(id, c.get(id)!, next);
  }
});
