import mongoose from 'mongoose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { errorCode, startTestDb, type TestDb } from './helpers';

let t: TestDb;
interface Item {
  sku: string;
  qty: number;
  price?: number;
  tags: string[];
  meta?: { color?: string; size?: number };
  createdAt?: Date;
  amount?: mongoose.Types.Decimal128;
  owner?: mongoose.Types.ObjectId;
  note?: string;
}
let Item: mongoose.Model<Item>;

beforeAll(async () => {
  t = await startTestDb('crud');
  Item = t.conn.model<Item>(
    'Item',
    new mongoose.Schema<Item>({
      sku: { type: String, required: true },
      qty: Number,
      price: Number,
      tags: [String],
      meta: { color: String, size: Number },
      createdAt: Date,
      amount: mongoose.Schema.Types.Decimal128,
      owner: mongoose.Schema.Types.ObjectId,
      note: String,
    }),
  );
  await Item.init();
});
afterAll(async () => {
  await t.close();
});
beforeEach(async () => {
  await Item.deleteMany({});
});

async function seed(n: number): Promise<void> {
  const docs = Array.from({ length: n }, (_, i) => ({
    sku: `sku-${String(i).padStart(3, '0')}`,
    qty: i,
    price: (i % 5) * 10,
    tags: i % 2 ? ['odd'] : ['even'],
    meta: { color: i % 3 ? 'red' : 'blue', size: i % 4 },
  }));
  await Item.insertMany(docs);
}

describe('insert and find', () => {
  it('round-trips Dates, ObjectIds and Decimal128', async () => {
    const owner = new mongoose.Types.ObjectId();
    const createdAt = new Date('2024-05-06T07:08:09.123Z');
    const created = await Item.create({ sku: 'x', qty: 1, tags: [], owner, createdAt, amount: mongoose.Types.Decimal128.fromString('12.345') });
    const back = await Item.findById(created._id).lean();
    expect(back!.owner!.toString()).toBe(owner.toHexString());
    expect(back!.createdAt!.getTime()).toBe(createdAt.getTime());
    expect(back!.amount!.toString()).toBe('12.345');
  });

  it('filters, sorts, skips, limits and projects', async () => {
    await seed(30);
    const res = await Item.find({ qty: { $gte: 10 }, 'meta.color': 'red' })
      .sort({ price: -1, qty: 1 })
      .skip(2)
      .limit(5)
      .select({ sku: 1, price: 1, _id: 0 })
      .lean();
    const expected = Array.from({ length: 30 }, (_, i) => i)
      .filter((i) => i >= 10 && i % 3 !== 0)
      .map((i) => ({ sku: `sku-${String(i).padStart(3, '0')}`, price: (i % 5) * 10, qty: i }))
      .sort((a, b) => b.price - a.price || a.qty - b.qty)
      .slice(2, 7)
      .map(({ sku, price }) => ({ sku, price }));
    expect(res).toEqual(expected);
  });

  it('supports exclusion projections and $in / $or / $regex filters', async () => {
    await seed(10);
    const ex = await Item.findOne({ sku: 'sku-001' }).select('-tags -meta').lean();
    expect(ex).not.toHaveProperty('tags');
    expect(ex).toHaveProperty('qty', 1);
    const inRes = await Item.find({ sku: { $in: ['sku-002', 'sku-005', 'nope'] } }).sort({ sku: 1 }).lean();
    expect(inRes.map((d) => d.qty)).toEqual([2, 5]);
    const orRes = await Item.find({ $or: [{ qty: 1 }, { sku: /-00[89]$/ }] }).sort({ qty: 1 }).lean();
    expect(orRes.map((d) => d.qty)).toEqual([1, 8, 9]);
  });

  it('projects _id alone with { _id: 1 } and everything but _id with { _id: 0 }', async () => {
    await seed(1);
    const coll = t.conn.collection('items');
    const only = await coll.findOne({ sku: 'sku-000' }, { projection: { _id: 1 } });
    expect(Object.keys(only!)).toEqual(['_id']);
    const without = await coll.findOne({ sku: 'sku-000' }, { projection: { _id: 0 } });
    expect(without).not.toHaveProperty('_id');
    expect(without).toHaveProperty('qty', 0);
  });

  it('pages through results with batchSize, getMore and killCursors', async () => {
    await seed(25);
    const coll = t.conn.collection('items');
    const cursor = coll.find({}, { batchSize: 4 }).sort({ qty: 1 });
    const seen: number[] = [];
    for await (const d of cursor) seen.push(d.qty as number);
    expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => i));

    const r = await t.conn.db!.command({ find: 'items', batchSize: 2 });
    const killed = await t.conn.db!.command({ killCursors: 'items', cursors: [r.cursor.id] });
    expect(killed.cursorsKilled.length).toBe(1);
    const gm = await t.conn.db!.command({ getMore: r.cursor.id, collection: 'items' }).catch((e: unknown) => e);
    expect(errorCode(gm)).toBe(43);
  });

  it('counts (count, countDocuments, estimatedDocumentCount) and distinct', async () => {
    await seed(20);
    expect(await Item.countDocuments({ tags: 'odd' })).toBe(10);
    expect(await Item.countDocuments({ qty: { $lt: 0 } })).toBe(0);
    expect(await Item.estimatedDocumentCount()).toBe(20);
    const c = await t.conn.db!.command({ count: 'items', query: { price: 20 } });
    expect(c.n).toBe(4);
    const colors = await Item.distinct('meta.color');
    expect([...colors].sort()).toEqual(['blue', 'red']);
    const tags = await Item.distinct('tags', { qty: { $lt: 3 } });
    expect([...tags].sort()).toEqual(['even', 'odd']);
  });
});

describe('updates', () => {
  it('applies $set $unset $inc $push $pull $addToSet', async () => {
    const d = await Item.create({ sku: 'u1', qty: 1, tags: ['a', 'b'], note: 'x' });
    await Item.updateOne(
      { _id: d._id },
      { $set: { 'meta.color': 'green' }, $unset: { note: '' }, $inc: { qty: 4 }, $push: { tags: 'c' } },
    );
    await Item.updateOne({ _id: d._id }, { $pull: { tags: 'a' } });
    await Item.updateOne({ _id: d._id }, { $addToSet: { tags: { $each: ['b', 'd'] } } });
    const back = await Item.findById(d._id).lean();
    expect(back!.qty).toBe(5);
    expect(back!.meta).toEqual({ color: 'green' });
    expect(back).not.toHaveProperty('note');
    expect(back!.tags).toEqual(['b', 'c', 'd']);
  });

  it('$pull removes array elements matching a condition on their fields', async () => {
    const coll = Item.collection;
    await coll.insertOne({ _id: 'pull1' as never, sku: 'pull1', box: [{ _id: 'e1', n: 1 }, { _id: 'e2', n: 2 }, { _id: 'e3', n: 3 }, { _id: ['odd'], n: 4 }, 7] });
    await coll.updateOne({ _id: 'pull1' as never }, { $pull: { box: { _id: { $in: ['e1', 'e3', 'odd'] } } } as never });
    expect((await coll.findOne({ _id: 'pull1' as never }))!.box).toEqual([{ _id: 'e2', n: 2 }, 7]);
    await coll.updateOne({ _id: 'pull1' as never }, { $pull: { box: { n: 2 } } as never });
    expect((await coll.findOne({ _id: 'pull1' as never }))!.box).toEqual([7]);
  });

  it('upserts with $setOnInsert only on insert', async () => {
    const r1 = await Item.updateOne({ sku: 'up' }, { $set: { qty: 1 }, $setOnInsert: { note: 'first' } }, { upsert: true });
    expect(r1.upsertedCount).toBe(1);
    expect(r1.upsertedId).toBeDefined();
    const r2 = await Item.updateOne({ sku: 'up' }, { $set: { qty: 2 }, $setOnInsert: { note: 'second' } }, { upsert: true });
    expect(r2.matchedCount).toBe(1);
    expect(r2.upsertedCount).toBe(0);
    const back = await Item.findOne({ sku: 'up' }).lean();
    expect(back).toMatchObject({ sku: 'up', qty: 2, note: 'first' });
  });

  it('refuses an upsert whose $setOnInsert changes the _id its filter names, as MongoDB does, inserting nothing', async () => {
    // Without an _id in the filter, $setOnInsert may choose it.
    const r = await Item.collection.updateOne({ sku: 'chosen' }, { $setOnInsert: { _id: 'chosen-id' as never } }, { upsert: true });
    expect(r.upsertedId).toBe('chosen-id');
    await expect(Item.collection.updateOne({ _id: 'named' as never }, { $set: { qty: 1 }, $setOnInsert: { _id: 'other' as never } }, { upsert: true })).rejects.toMatchObject({ code: 66 });
    expect(await Item.collection.countDocuments({ _id: { $in: ['named', 'other'] } as never })).toBe(0);
  });

  it('updates many with multi and reports matched/modified counts', async () => {
    await seed(10);
    const r = await Item.updateMany({ tags: 'odd' }, { $set: { note: 'odd one' } });
    expect(r.matchedCount).toBe(5);
    expect(r.modifiedCount).toBe(5);
    const again = await Item.updateMany({ tags: 'odd' }, { $set: { note: 'odd one' } });
    expect(again.matchedCount).toBe(5);
    expect(again.modifiedCount).toBe(0);
    expect(await Item.countDocuments({ note: 'odd one' })).toBe(5);
  });

  it('applies conditional updates only when the filter matches', async () => {
    const d = await Item.create({ sku: 'cond', qty: 3, tags: [] });
    const miss = await Item.updateOne({ _id: d._id, qty: { $gte: 5 } }, { $inc: { qty: -5 } });
    expect(miss.modifiedCount).toBe(0);
    const hit = await Item.updateOne({ _id: d._id, qty: { $gte: 3 } }, { $inc: { qty: -3 } });
    expect(hit.modifiedCount).toBe(1);
    expect((await Item.findById(d._id).lean())!.qty).toBe(0);
  });

  it('updates array elements with the positional operator', async () => {
    const coll = t.conn.collection('orders');
    await coll.insertOne({ _id: 'o1' as never, lines: [{ sku: 'a', n: 1 }, { sku: 'b', n: 1 }] });
    await coll.updateOne({ _id: 'o1' as never, 'lines.sku': 'b' }, { $inc: { 'lines.$.n': 2 } });
    const o = await coll.findOne({ _id: 'o1' as never });
    expect(o!.lines).toEqual([{ sku: 'a', n: 1 }, { sku: 'b', n: 3 }]);
  });

  it('replaces documents and refuses to change _id', async () => {
    const coll = t.conn.collection('repl');
    const { insertedId } = await coll.insertOne({ a: 1, b: 2 });
    await coll.replaceOne({ _id: insertedId }, { a: 9 });
    expect(await coll.findOne({ _id: insertedId })).toEqual({ _id: insertedId, a: 9 });
    const err = await coll.updateOne({ _id: insertedId }, { $set: { _id: new mongoose.Types.ObjectId() } }).catch((e: unknown) => e);
    expect(errorCode(err)).toBe(66);
  });

  it('rejects $inc on a non-numeric field', async () => {
    const d = await Item.create({ sku: 'bad', qty: 1, tags: [], note: 'text' });
    const err = await t.conn.collection('items').updateOne({ _id: d._id }, { $inc: { note: 1 } }).catch((e: unknown) => e);
    expect(errorCode(err)).toBe(14);
  });
});

describe('hostile input', () => {
  it('field names like __proto__ never reach Object.prototype', async () => {
    const coll = t.conn.collection('proto');
    const { insertedId } = await coll.insertOne({ a: 1 });
    await coll.updateOne({ _id: insertedId }, { $set: { '__proto__.polluted': 'yes' } }).catch(() => undefined);
    await coll.updateOne({ _id: insertedId }, { $set: { 'x.__proto__.polluted': 'yes' } }).catch(() => undefined);
    await coll.updateOne({ q: 1 }, { $set: { 'constructor.prototype.polluted': 'yes' } }, { upsert: true }).catch(() => undefined);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((await coll.findOne({ _id: insertedId }))!.a).toBe(1);
  });
});

describe('delete', () => {
  it('deletes one and many', async () => {
    await seed(10);
    expect((await Item.deleteOne({ tags: 'odd' })).deletedCount).toBe(1);
    expect((await Item.deleteMany({ tags: 'odd' })).deletedCount).toBe(4);
    expect(await Item.countDocuments()).toBe(5);
  });
});

describe('findOneAndUpdate / findAndModify', () => {
  it('returns the document before or after the update', async () => {
    await Item.create({ sku: 'f', qty: 1, tags: [] });
    const before = await Item.findOneAndUpdate({ sku: 'f' }, { $inc: { qty: 1 } }, { returnDocument: 'before' }).lean();
    expect(before!.qty).toBe(1);
    const after = await Item.findOneAndUpdate({ sku: 'f' }, { $inc: { qty: 1 } }, { returnDocument: 'after' }).lean();
    expect(after!.qty).toBe(3);
  });

  it('upserts and returns the new document', async () => {
    const doc = await Item.findOneAndUpdate({ sku: 'new' }, { $set: { qty: 7 } }, { upsert: true, returnDocument: 'after' }).lean();
    expect(doc).toMatchObject({ sku: 'new', qty: 7 });
    const none = await Item.findOneAndUpdate({ sku: 'absent' }, { $set: { qty: 1 } }, { upsert: true, returnDocument: 'before' }).lean();
    expect(none).toBeNull();
    expect(await Item.countDocuments({ sku: 'absent' })).toBe(1);
  });

  it('honours sort to pick the document and can remove it', async () => {
    await seed(5);
    const top = await Item.findOneAndUpdate({}, { $set: { note: 'top' } }, { sort: { qty: -1 }, returnDocument: 'after' }).lean();
    expect(top!.qty).toBe(4);
    const removed = await Item.findOneAndDelete({ tags: 'even' }, { sort: { qty: 1 } }).lean();
    expect(removed!.qty).toBe(0);
    expect(await Item.countDocuments()).toBe(4);
  });

  it('returns null when nothing matches and upsert is off', async () => {
    expect(await Item.findOneAndUpdate({ sku: 'nothing' }, { $set: { qty: 1 } }).lean()).toBeNull();
  });
});

describe('collections', () => {
  it('creates, lists and drops collections', async () => {
    await t.conn.createCollection('made');
    const names = (await t.conn.db!.listCollections().toArray()).map((c) => c.name);
    expect(names).toContain('made');
    const exists = await t.conn.createCollection('made').catch((e: unknown) => e);
    // MongoDB 7 may answer ok for an identical re-create; older servers say NamespaceExists (48).
    if (exists instanceof Error) expect(errorCode(exists)).toBe(48);
    await t.conn.dropCollection('made');
    const after = (await t.conn.db!.listCollections({ name: 'made' }).toArray()).length;
    expect(after).toBe(0);
  });

  it('drops a database', async () => {
    const other = t.conn.useDb(`${t.dbName}_x`);
    await other.collection('c').insertOne({ a: 1 });
    await other.dropDatabase();
    const r = await t.conn.db!.admin().command({ listDatabases: 1 });
    expect(r.databases.map((d: { name: string }) => d.name)).not.toContain(`${t.dbName}_x`);
  });
});
