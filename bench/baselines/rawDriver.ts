import { randomBytes } from 'node:crypto';
import mongoose from 'mongoose';
import { withCpu } from '../lib/processes';
import { summarize, type Measure } from '../lib/stats';

/**
 * The storage limit: the MongoDB driver (the one mongoose wraps) talking straight to the same database
 * process, `concurrency` operations in flight, no HTTP, no mongoose. `insertOne` writes a document
 * shaped like a stored payment intent; `findOne` reads one of them back by _id.
 */
const COLLECTION = 'bench_raw_payments';

type RawDoc = { _id: string } & Record<string, unknown>;

function paymentLikeDocument(accountId: string): RawDoc {
  const now = new Date();
  return {
    _id: `pay_${randomBytes(18).toString('base64url').slice(0, 24)}`,
    account_id: accountId,
    seq: Math.floor(Math.random() * 1e9),
    version: 0,
    amount: 25_000,
    currency: 'AOA',
    payment_method: 'multicaixa_reference',
    status: 'PENDING',
    failure_code: null,
    customer: null,
    merchant_reference: 'order-bench',
    reference: { entity: '12345', number: String(100_000_000 + Math.floor(Math.random() * 899_999_999)), expires_at: now },
    amount_refunded: 0,
    amount_reserved: 0,
    fee: null,
    fee_version: null,
    api_key_id: 'key_benchbenchbenchbenchbench',
    metadata: { order_id: 'bench' },
    livemode: false,
    payment_link_id: null,
    checkout_session_id: null,
    refunds: [],
    succeeded_at: null,
    pending_events: [],
    created_at: now,
    updated_at: now,
  };
}

async function timedLoop(concurrency: number, seconds: number, op: () => Promise<unknown>): Promise<Measure> {
  const samples: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        try {
          await op();
          samples.push(performance.now() - t0);
        } catch {
          errors++;
        }
      }
    }),
  );
  return summarize(samples, (performance.now() - started) / 1000, errors);
}

/** timedLoop, with the CPU per operation of the watched processes. */
async function measured(concurrency: number, seconds: number, op: () => Promise<unknown>, watch: Record<string, number>): Promise<Measure> {
  const { result, cpu } = await withCpu(watch, () => timedLoop(concurrency, seconds, op));
  return { ...result, cpuPerOp: Object.fromEntries(Object.entries(cpu).map(([k, ms]) => [k, ms / Math.max(1, result.count)])) };
}

interface RowOptions {
  concurrency: number;
  durationS: number;
  warmupS: number;
  watch?: Record<string, number>;
}

export interface RawDriverBench {
  insertOne(opts: RowOptions): Promise<Measure>;
  findOne(opts: RowOptions): Promise<Measure>;
  close(): Promise<void>;
}

export async function openRawDriverBench(uri: string): Promise<RawDriverBench> {
  const client = new mongoose.mongo.MongoClient(uri, { maxPoolSize: 100 });
  await client.connect();
  const coll = client.db().collection<RawDoc>(COLLECTION);
  await coll.createIndex({ account_id: 1, created_at: -1 });
  const ids: string[] = [];
  const insert = async () => {
    const doc = paymentLikeDocument('acct_bench_raw');
    await coll.insertOne(doc);
    if (ids.length < 100_000) ids.push(doc._id);
  };
  return {
    async insertOne({ concurrency, durationS, warmupS, watch = {} }) {
      await timedLoop(concurrency, warmupS, insert);
      return measured(concurrency, durationS, insert, watch);
    },
    async findOne({ concurrency, durationS, warmupS, watch = {} }) {
      if (ids.length === 0) await timedLoop(concurrency, 1, insert);
      const find = async () => {
        const id = ids[Math.floor(Math.random() * ids.length)]!;
        const doc = await coll.findOne({ _id: id });
        if (!doc) throw new Error('missing');
      };
      await timedLoop(concurrency, warmupS, find);
      return measured(concurrency, durationS, find, watch);
    },
    async close() {
      await client.close();
    },
  };
}
