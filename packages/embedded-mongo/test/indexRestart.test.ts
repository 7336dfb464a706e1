import { MongoClient, type Document, type IndexDescription } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { startEmbeddedMongo } from '../src/index';
import { errorCode, skipIfExternal, tempDirs } from './helpers';

/**
 * Start-up builds the unique indexes in one pass from the stored documents (Collection.finishLoad), not
 * through the inserts that built them while the engine ran, and the others at their first use or in
 * idle time after it. The same queries must then give the same
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

  it.skipIf(skipIfExternal('restarts the embedded engine on its data directory'))(
    'defers non-unique indexes: writes before their first use count, duplicates are refused at once, idle time builds the rest',
    async () => {
      const dataDir = tempDir();
      const memory = await startEmbeddedMongo({});
      let db = await startEmbeddedMongo({ dataDir });
      const both = [await MongoClient.connect(memory.uri), await MongoClient.connect(db.uri)];
      const coll = (client: MongoClient) => client.db('t').collection<Row>('docs');
      const specs: IndexDescription[] = [
        { key: { acct: 1, seq: -1 } },
        { key: { tags: 1 } },
        { key: { state: 1, at: 1 }, partialFilterExpression: { state: 'open' } },
        { key: { other: 1 } },
        { key: { ref: 1 }, unique: true },
      ];
      const rows: Row[] = Array.from({ length: 40 }, (_, i) => ({
        _id: `d${i}`,
        acct: `a${i % 3}`,
        seq: i,
        state: i % 2 ? 'open' : 'done',
        at: new Date(2_000_000 + i),
        tags: [`t${i % 4}`],
        other: i % 5,
        ref: `r${i}`,
      }));
      for (const client of both) {
        await coll(client).createIndexes(specs);
        await coll(client).insertMany(rows);
      }
      await both[1]!.close();
      await db.close();
      const logs: Array<{ msg: string; extra?: object }> = [];
      db = await startEmbeddedMongo({ dataDir, logger: (msg, extra) => logs.push({ msg, extra }) });
      both[1] = await MongoClient.connect(db.uri);
      const queries: Array<{ filter: Document; sort?: Document }> = [
        { filter: { acct: 'a1' }, sort: { seq: -1 } },
        { filter: { tags: { $gte: 't2' } } },
        { filter: { state: 'open', at: { $lte: new Date(2_000_100) } }, sort: { at: 1 } },
      ];
      const answer = async (client: MongoClient, q: { filter: Document; sort?: Document }) => {
        const ids = (await coll(client).find(q.filter, { sort: q.sort }).toArray()).map((d) => d._id);
        const explain = await coll(client).find(q.filter, { sort: q.sort }).explain('executionStats');
        return { ids: q.sort ? ids : ids.sort(), plan: JSON.stringify(explain.queryPlanner.winningPlan) };
      };
      try {
        // Before any query reads them: a unique index is there at once, the others take the writes later.
        const dup = await coll(both[1]!).insertOne({ _id: 'dup', ref: 'r3' }).catch((e: unknown) => e);
        expect(errorCode(dup)).toBe(11000);
        for (const client of both) {
          const c = coll(client);
          await c.insertOne({ _id: 'new', acct: 'a1', seq: 500, state: 'open', at: new Date(2_000_050), tags: ['t3', 't9'], other: 9, ref: 'rn' });
          await c.updateOne({ _id: 'd4' }, { $set: { acct: 'a1', seq: 400, state: 'open' } });
          await c.updateOne({ _id: 'd7' }, { $set: { acct: 'a9', tags: ['t0', 't3'] } });
          await c.deleteOne({ _id: 'd10' });
        }
        for (const q of queries) expect(await answer(both[1]!, q), JSON.stringify(q)).toEqual(await answer(both[0]!, q));
        // `other` was never read: idle time builds it, and it answers as the one kept by every write.
        await expect.poll(() => logs.find((l) => l.msg === 'embedded db: deferred indexes built'), { timeout: 10_000 }).toBeTruthy();
        expect(logs.find((l) => l.msg === 'embedded db: deferred indexes built')!.extra).toMatchObject({ indexes: expect.any(Number) });
        await coll(both[1]!).updateOne({ _id: 'd11' }, { $set: { other: 9 } });
        await coll(both[0]!).updateOne({ _id: 'd11' }, { $set: { other: 9 } });
        const q = { filter: { other: 9 } };
        expect(await answer(both[1]!, q)).toEqual(await answer(both[0]!, q));
        expect((await answer(both[1]!, q)).ids).toEqual(['d11', 'new']);
      } finally {
        for (const client of both) await client.close();
        await db.close();
        await memory.close();
      }
    },
  );
});
