import { MongoClient, type Document } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { startEmbeddedMongo } from '../src/index';
import { errorCode, skipIfExternal, tempDirs } from './helpers';

/**
 * Start-up builds every index in one pass from the stored documents (Collection.finishLoad), not
 * through the inserts that built them while the engine ran. The same queries must then give the same
 * documents, in the same order, from the same plans examining the same keys; unique indexes must
 * still refuse duplicates; and an index over arrays must still know it is multikey (a range over it
 * meets a document once per element: without de-duplication a document came back twice).
 */
const tempDir = tempDirs('pgw-index-restart-');

interface Row {
  _id: string;
  [field: string]: unknown;
}

const QUERIES: Array<{ filter: Document; sort?: Document; limit?: number }> = [
  { filter: { acct: 'a1' }, sort: { seq: -1 }, limit: 5 },
  { filter: { acct: 'a2', state: 'open' }, sort: { seq: -1 } },
  { filter: { acct: { $in: ['a1', 'a3'] }, state: 'done' } },
  { filter: { at: { $gte: new Date(1_000_000), $lt: new Date(1_000_020) } } },
  { filter: { state: 'open', at: { $lte: new Date(1_000_030) } } },
  { filter: { tags: { $gte: 'm' } } },
  { filter: { tags: 'x3' } },
  { filter: { ref: 'r7' } },
  { filter: { opt: { $gt: 5 } } },
  { filter: { kind: 'big', seq: { $gt: 10 } } },
  { filter: {}, sort: { seq: 1 }, limit: 7 },
];

async function answers(client: MongoClient): Promise<unknown[]> {
  const c = client.db('t').collection<Row>('docs');
  const out: unknown[] = [];
  for (const q of QUERIES) {
    const cursor = c.find(q.filter, { sort: q.sort, limit: q.limit });
    const ids = (await cursor.toArray()).map((d) => d._id);
    // Without a sort the order is the plan's: compare it as a set.
    const explain = await c.find(q.filter, { sort: q.sort, limit: q.limit }).explain('executionStats');
    const stats = explain.executionStats as { totalKeysExamined: number; nReturned: number };
    const plan = JSON.stringify(explain.queryPlanner.winningPlan);
    out.push({ q: JSON.stringify(q), ids: q.sort ? ids : [...ids].sort(), keys: stats.totalKeysExamined, plan });
  }
  return out;
}

describe('indexes rebuilt at start-up', () => {
  it.skipIf(skipIfExternal('restarts the embedded engine on its data directory'))(
    'answer as the indexes built by inserts did, refuse duplicates and stay multikey',
    async () => {
      const dataDir = tempDir();
      let db = await startEmbeddedMongo({ dataDir });
      let client = await MongoClient.connect(db.uri);
      const c = client.db('t').collection<Row>('docs');
      await c.createIndexes([
        { key: { acct: 1, seq: -1 } },
        { key: { acct: 1, state: 1, seq: -1 } },
        { key: { state: 1, at: 1 } },
        { key: { at: 1 } },
        { key: { tags: 1 } },
        { key: { ref: 1 }, unique: true, partialFilterExpression: { ref: { $type: 'string' } } },
        { key: { opt: 1 }, sparse: true },
        { key: { kind: 1, seq: 1 }, partialFilterExpression: { kind: 'big' } },
      ]);
      const docs: Row[] = [];
      for (let i = 0; i < 60; i++) {
        docs.push({
          _id: `d${(i * 37) % 60}`,
          acct: `a${i % 4}`,
          seq: i,
          state: i % 3 === 0 ? 'open' : 'done',
          at: new Date(1_000_000 + i),
          tags: i % 5 === 0 ? [] : [`x${i % 7}`, `m${i % 2}`, 'x3'],
          ...(i % 2 === 0 ? { ref: `r${i}` } : {}),
          ...(i % 4 === 1 ? { opt: i } : {}),
          kind: i % 6 === 0 ? 'big' : 'small',
        });
      }
      await c.insertMany(docs);
      await c.deleteOne({ _id: 'd5' });
      await c.updateOne({ _id: 'd6' }, { $set: { seq: 1000, tags: ['zz', 'x3'] } });
      const before = await answers(client);
      await client.close();
      await db.close();

      db = await startEmbeddedMongo({ dataDir });
      client = await MongoClient.connect(db.uri);
      try {
        expect(await answers(client)).toEqual(before);
        const again = client.db('t').collection<Row>('docs');
        const multi = (await again.find({ tags: { $gte: 'm' } }).toArray()).map((d) => d._id);
        expect(multi.length).toBe(new Set(multi).size);
        expect(multi.length).toBeGreaterThan(40);
        const dup = await again.insertOne({ _id: 'dup', ref: 'r8' }).catch((e: unknown) => e);
        expect(errorCode(dup)).toBe(11000);
        expect(dup).toMatchObject({ keyPattern: { ref: 1 }, keyValue: { ref: 'r8' } });
      } finally {
        await client.close();
        await db.close();
      }
    },
  );
});
