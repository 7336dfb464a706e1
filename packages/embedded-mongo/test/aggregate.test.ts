import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDb, type TestDb } from './helpers';

let t: TestDb;
beforeAll(async () => {
  t = await startTestDb('aggregate');
  await t.conn.collection('sales').insertMany([
    { _id: 1 as never, shop: 'a', amount: 10, items: ['x', 'y'], customer: 'c1' },
    { _id: 2 as never, shop: 'a', amount: 5, items: ['x'], customer: 'c2' },
    { _id: 3 as never, shop: 'b', amount: 7, items: [], customer: 'c1' },
    { _id: 4 as never, shop: 'b', amount: 1, items: ['z'], customer: 'c3' },
    { _id: 5 as never, shop: 'c', amount: 20, items: ['y', 'z'], customer: 'c2' },
  ]);
  await t.conn.collection('customers').insertMany([
    { _id: 'c1' as never, name: 'Ana' },
    { _id: 'c2' as never, name: 'Bea' },
  ]);
});
afterAll(async () => {
  await t.close();
});

const sales = () => t.conn.collection('sales');

describe('aggregate', () => {
  it('$match $sort $skip $limit $project', async () => {
    const r = await sales()
      .aggregate([
        { $match: { amount: { $gt: 1 } } },
        { $sort: { amount: -1 } },
        { $skip: 1 },
        { $limit: 2 },
        { $project: { _id: 0, shop: 1, amount: 1 } },
      ])
      .toArray();
    expect(r).toEqual([
      { shop: 'a', amount: 10 },
      { shop: 'b', amount: 7 },
    ]);
  });

  it('$group with accumulators and $sort on the result', async () => {
    const r = await sales()
      .aggregate([{ $group: { _id: '$shop', total: { $sum: '$amount' }, n: { $sum: 1 } } }, { $sort: { _id: 1 } }])
      .toArray();
    expect(r).toEqual([
      { _id: 'a', total: 15, n: 2 },
      { _id: 'b', total: 8, n: 2 },
      { _id: 'c', total: 20, n: 1 },
    ]);
  });

  it('$count', async () => {
    const r = await sales().aggregate([{ $match: { shop: 'a' } }, { $count: 'howMany' }]).toArray();
    expect(r).toEqual([{ howMany: 2 }]);
  });

  it('$unwind', async () => {
    const r = await sales()
      .aggregate([{ $unwind: '$items' }, { $group: { _id: '$items', n: { $sum: 1 } } }, { $sort: { _id: 1 } }])
      .toArray();
    expect(r).toEqual([
      { _id: 'x', n: 2 },
      { _id: 'y', n: 2 },
      { _id: 'z', n: 2 },
    ]);
  });

  it('$lookup joins another collection', async () => {
    const r = await sales()
      .aggregate([
        { $match: { _id: { $in: [1, 4] } } },
        { $sort: { _id: 1 } },
        { $lookup: { from: 'customers', localField: 'customer', foreignField: '_id', as: 'who' } },
        { $project: { _id: 1, names: '$who.name' } },
      ])
      .toArray();
    expect(r).toEqual([
      { _id: 1, names: ['Ana'] },
      { _id: 4, names: [] },
    ]);
  });

  it('$set adds computed fields without changing stored documents', async () => {
    const r = await sales()
      .aggregate([{ $match: { _id: 2 } }, { $set: { double: { $multiply: ['$amount', 2] } } }])
      .toArray();
    expect(r[0]).toMatchObject({ _id: 2, amount: 5, double: 10 });
    const stored = await sales().findOne({ _id: 2 as never });
    expect(stored).not.toHaveProperty('double');
  });

  it('countDocuments goes through aggregate', async () => {
    expect(await sales().countDocuments({ amount: { $gte: 7 } })).toBe(3);
    expect(await sales().countDocuments({ shop: 'none' })).toBe(0);
    expect(await sales().countDocuments({}, { skip: 1, limit: 2 })).toBe(2);
  });

  it('never changes the stored documents, whatever its stages write into their input', async () => {
    const coll = t.conn.collection('untouched');
    await coll.insertMany([{ _id: 'u1' as never, a: { b: 1 }, drop: 'me', n: 1 }]);
    await t.conn.collection('untouched_side').insertOne({ _id: 'u1' as never, note: 'x', nested: { k: 1 } });
    const out = await coll
      .aggregate([
        { $set: { 'a.c': 2, n: 5 } },
        { $unset: 'drop' },
        { $lookup: { from: 'untouched_side', localField: '_id', foreignField: '_id', as: 'side' } },
        { $unwind: '$side' },
        { $set: { 'side.nested.k': 9 } },
        { $unset: 'side.note' },
      ])
      .toArray();
    expect(out).toEqual([{ _id: 'u1', a: { b: 1, c: 2 }, n: 5, side: { _id: 'u1', nested: { k: 9 } } }]);
    expect(await coll.findOne({ _id: 'u1' as never })).toEqual({ _id: 'u1', a: { b: 1 }, drop: 'me', n: 1 });
    expect(await t.conn.collection('untouched_side').findOne({ _id: 'u1' as never })).toEqual({ _id: 'u1', note: 'x', nested: { k: 1 } });
  });

  it('returns nothing for a missing collection', async () => {
    expect(await t.conn.collection('nothing_here').aggregate([{ $match: {} }]).toArray()).toEqual([]);
  });

  it('pages large aggregate results with getMore', async () => {
    const coll = t.conn.collection('many');
    await coll.insertMany(Array.from({ length: 300 }, (_, i) => ({ i })));
    const r = await coll.aggregate([{ $sort: { i: 1 } }, { $project: { _id: 0, i: 1 } }], { batchSize: 50 }).toArray();
    expect(r.length).toBe(300);
    expect(r[299]).toEqual({ i: 299 });
  });
});
