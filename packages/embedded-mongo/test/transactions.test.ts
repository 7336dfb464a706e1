import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCode, startTestDb, type TestDb } from './helpers';

let t: TestDb;
interface WalletDoc {
  owner: string;
  balance: number;
}
let Wallet: mongoose.Model<WalletDoc>;
beforeAll(async () => {
  t = await startTestDb('txn');
  Wallet = t.conn.model<WalletDoc>(
    'Wallet',
    new mongoose.Schema<WalletDoc>({ owner: { type: String, unique: true }, balance: Number }, { optimisticConcurrency: true }),
  );
  await Wallet.init();
});
afterAll(async () => {
  await t.close();
});

describe('transactions', () => {
  it('commits all writes together and the transaction reads its own writes', async () => {
    const session = await t.conn.startSession();
    try {
      await session.withTransaction(async () => {
        await Wallet.create([{ owner: 'commit-a', balance: 10 }], { session });
        await Wallet.create([{ owner: 'commit-b', balance: 20 }], { session });
        const inside = await Wallet.findOne({ owner: 'commit-a' }).session(session).lean();
        expect(inside!.balance).toBe(10);
      });
    } finally {
      await session.endSession();
    }
    expect(await Wallet.countDocuments({ owner: /^commit-/ })).toBe(2);
  });

  it('abort undoes its own inserts, updates and deletes', async () => {
    await Wallet.create([{ owner: 'keep-upd', balance: 1 }, { owner: 'keep-del', balance: 2 }]);
    const session = await t.conn.startSession();
    session.startTransaction();
    await Wallet.create([{ owner: 'abort-new', balance: 3 }], { session });
    await Wallet.updateOne({ owner: 'keep-upd' }, { $inc: { balance: 100 } }, { session });
    await Wallet.deleteOne({ owner: 'keep-del' }, { session });
    await session.abortTransaction();
    await session.endSession();
    expect(await Wallet.exists({ owner: 'abort-new' })).toBeNull();
    expect((await Wallet.findOne({ owner: 'keep-upd' }).lean())!.balance).toBe(1);
    expect((await Wallet.findOne({ owner: 'keep-del' }).lean())!.balance).toBe(2);
  });

  it("abort leaves another session's concurrent write intact", async () => {
    await Wallet.create({ owner: 'shared-other', balance: 5 });
    const session = await t.conn.startSession();
    session.startTransaction();
    await Wallet.create([{ owner: 'txn-only', balance: 1 }], { session });
    // Meanwhile, outside the transaction, other writes happen and are acknowledged.
    await Wallet.create({ owner: 'outside-insert', balance: 7 });
    await Wallet.updateOne({ owner: 'shared-other' }, { $inc: { balance: 10 } });
    await session.abortTransaction();
    await session.endSession();
    expect(await Wallet.exists({ owner: 'txn-only' })).toBeNull();
    expect((await Wallet.findOne({ owner: 'outside-insert' }).lean())!.balance).toBe(7);
    expect((await Wallet.findOne({ owner: 'shared-other' }).lean())!.balance).toBe(15);
  });

  it('a failed write inside a transaction aborts it', async () => {
    await Wallet.create({ owner: 'taken', balance: 0 });
    const session = await t.conn.startSession();
    session.startTransaction();
    await Wallet.create([{ owner: 'before-dup', balance: 1 }], { session });
    const err = await Wallet.create([{ owner: 'taken', balance: 1 }], { session }).catch((e: unknown) => e);
    expect(errorCode(err)).toBe(11000);
    const commit = await session.commitTransaction().catch((e: unknown) => e);
    expect(commit).toBeInstanceOf(Error);
    await session.endSession();
    expect(await Wallet.exists({ owner: 'before-dup' })).toBeNull();
  });

  it('concurrent transactions on different documents both commit', async () => {
    const run = (owner: string) =>
      t.conn.transaction(async (session) => {
        await Wallet.create([{ owner, balance: 1 }], { session });
        await Wallet.updateOne({ owner }, { $inc: { balance: 1 } }, { session });
      });
    await Promise.all([run('par-1'), run('par-2')]);
    expect((await Wallet.find({ owner: /^par-/ }).sort({ owner: 1 }).lean()).map((w) => w.balance)).toEqual([2, 2]);
  });

  it('a write outside a transaction to a document it touched waits for the commit', async () => {
    await Wallet.create({ owner: 'contended', balance: 0 });
    const session = await t.conn.startSession();
    session.startTransaction();
    await Wallet.updateOne({ owner: 'contended' }, { $inc: { balance: 10 } }, { session });
    const outside = Wallet.updateOne({ owner: 'contended' }, { $inc: { balance: 1 } }).exec();
    await session.commitTransaction();
    await session.endSession();
    await outside;
    expect((await Wallet.findOne({ owner: 'contended' }).lean())!.balance).toBe(11);
  });

  it('mongoose connection.transaction() commits', async () => {
    await t.conn.transaction(async (session) => {
      await Wallet.create([{ owner: 'conn-txn', balance: 9 }], { session });
    });
    expect((await Wallet.findOne({ owner: 'conn-txn' }).lean())!.balance).toBe(9);
  });
});

describe('concurrency', () => {
  it('30 concurrent version-checked saves: exactly one winner', async () => {
    const w = await Wallet.create({ owner: 'race', balance: 0 });
    const copies = await Promise.all(Array.from({ length: 30 }, () => Wallet.findById(w._id)));
    copies.forEach((c, i) => (c!.balance = i + 1));
    const results = await Promise.allSettled(copies.map((c) => c!.save()));
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r) => r.status === 'rejected');
    expect(won.length).toBe(1);
    expect(lost.every((r) => (r as PromiseRejectedResult).reason.name === 'VersionError')).toBe(true);
    const final = await Wallet.findById(w._id).lean();
    expect(final!.__v).toBe(1);
  });

  it('30 concurrent __v-conditional updates: exactly one matches', async () => {
    const w = await Wallet.create({ owner: 'race2', balance: 0 });
    const res = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        Wallet.updateOne({ _id: w._id, __v: 0 }, { $set: { balance: i }, $inc: { __v: 1 } }),
      ),
    );
    expect(res.filter((r) => r.modifiedCount === 1).length).toBe(1);
  });

  it('findOneAndUpdate is atomic: 50 concurrent increments hand out 50 distinct values', async () => {
    await Wallet.create({ owner: 'counter', balance: 0 });
    const vals = await Promise.all(
      Array.from({ length: 50 }, () =>
        Wallet.findOneAndUpdate({ owner: 'counter' }, { $inc: { balance: 1 } }, { returnDocument: 'after' }).lean(),
      ),
    );
    expect(new Set(vals.map((v) => v!.balance)).size).toBe(50);
    expect((await Wallet.findOne({ owner: 'counter' }).lean())!.balance).toBe(50);
  });
});

describe('bulkWrite', () => {
  it('ordered: stops at the first error and reports its index', async () => {
    await Wallet.create({ owner: 'bulk-dup', balance: 0 });
    const err = (await Wallet.bulkWrite(
      [
        { insertOne: { document: { owner: 'bulk-1', balance: 1 } } },
        { insertOne: { document: { owner: 'bulk-dup', balance: 1 } } },
        { insertOne: { document: { owner: 'bulk-3', balance: 1 } } },
      ],
      { ordered: true },
    ).catch((e: unknown) => e)) as { writeErrors: Array<{ index: number; code: number }> };
    expect(err.writeErrors.map((e) => [e.index, e.code])).toEqual([[1, 11000]]);
    expect(await Wallet.exists({ owner: 'bulk-1' })).not.toBeNull();
    expect(await Wallet.exists({ owner: 'bulk-3' })).toBeNull();
  });

  it('unordered: continues past errors and reports every failing index', async () => {
    const err = (await Wallet.bulkWrite(
      [
        { insertOne: { document: { owner: 'bulk-dup', balance: 1 } } },
        { insertOne: { document: { owner: 'ubulk-2', balance: 1 } } },
        { updateOne: { filter: { owner: 'ubulk-2' }, update: { $set: { balance: 5 } } } },
        { insertOne: { document: { owner: 'bulk-1', balance: 1 } } },
        { deleteOne: { filter: { owner: 'bulk-dup' } } },
      ],
      { ordered: false },
    ).catch((e: unknown) => e)) as { writeErrors: Array<{ index: number; code: number }>; result: { insertedCount: number } };
    expect(err.writeErrors.map((e) => e.index).sort()).toEqual([0, 3]);
    expect(err.writeErrors.every((e) => e.code === 11000)).toBe(true);
    expect((await Wallet.findOne({ owner: 'ubulk-2' }).lean())!.balance).toBe(5);
    expect(await Wallet.exists({ owner: 'bulk-dup' })).toBeNull();
  });

  it('mixed successful bulk reports counts', async () => {
    const r = await Wallet.bulkWrite([
      { insertOne: { document: { owner: 'mix-1', balance: 1 } } },
      { updateOne: { filter: { owner: 'mix-1' }, update: { $inc: { balance: 1 } } } },
      { updateOne: { filter: { owner: 'mix-2' }, update: { $set: { balance: 3 } }, upsert: true } },
      { deleteMany: { filter: { owner: 'nobody' } } },
    ]);
    expect(r.insertedCount).toBe(1);
    expect(r.modifiedCount).toBe(1);
    expect(r.upsertedCount).toBe(1);
    expect(r.deletedCount).toBe(0);
  });
});
