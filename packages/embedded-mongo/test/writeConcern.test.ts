/**
 * The engine answers writes that ask for w: "majority" (what the gateway sends, src/db/writeConcern.ts)
 * as the primary of a replica set does: applied and acknowledged, with no writeConcernError. Runs
 * unchanged against a real replica set (MONGODB_URI).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDb, type TestDb } from './helpers';

let t: TestDb;
beforeAll(async () => {
  t = await startTestDb('wc');
});
afterAll(async () => {
  await t?.close();
});

describe('write concern w: "majority"', () => {
  it('is accepted on raw insert, update and delete commands, which answer as without it', async () => {
    const db = t.conn.db!;
    const majority = { w: 'majority', wtimeout: 10_000 };
    const ins = await db.command({ insert: 'wc', documents: [{ _id: 1 }, { _id: 2 }], ordered: false, writeConcern: majority });
    expect([ins.ok, ins.n, ins.writeConcernError]).toEqual([1, 2, undefined]);
    const dup = await db.command({ insert: 'wc', documents: [{ _id: 1 }], writeConcern: majority });
    expect([dup.ok, dup.writeErrors?.[0]?.code, dup.writeConcernError]).toEqual([1, 11000, undefined]);
    const upd = await db.command({ update: 'wc', updates: [{ q: { _id: 1 }, u: { $set: { a: 1 } } }], writeConcern: { w: 'majority', j: true } });
    expect([upd.ok, upd.n, upd.nModified, upd.writeConcernError]).toEqual([1, 1, 1, undefined]);
    const del = await db.command({ delete: 'wc', deletes: [{ q: { _id: 2 }, limit: 1 }], writeConcern: majority });
    expect([del.ok, del.n, del.writeConcernError]).toEqual([1, 1, undefined]);
  });

  it('is accepted through the driver (collection default and findOneAndUpdate)', async () => {
    const coll = t.conn.db!.collection('wc2', { writeConcern: { w: 'majority' } });
    expect((await coll.insertOne({ _id: 'a' as never, n: 1 })).acknowledged).toBe(true);
    const after = await coll.findOneAndUpdate({ _id: 'a' as never }, { $inc: { n: 1 } }, { returnDocument: 'after' });
    expect(after?.n).toBe(2);
    expect((await coll.updateMany({}, { $set: { m: true } })).modifiedCount).toBe(1);
  });
});
