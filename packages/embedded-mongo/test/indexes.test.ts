import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCode, startTestDb, type TestDb } from './helpers';

let t: TestDb;
beforeAll(async () => {
  t = await startTestDb('indexes');
});
afterAll(async () => {
  await t.close();
});

interface Account {
  email: string;
  tenant: string;
  handle: string;
  phone?: string;
  ref?: string;
  status: string;
}

describe('index management', () => {
  it('creates, lists and drops indexes (and mongoose autoIndex creates schema indexes)', async () => {
    const schema = new mongoose.Schema<Account>({
      email: { type: String, unique: true },
      tenant: String,
      handle: String,
      phone: String,
      ref: String,
      status: String,
    });
    schema.index({ tenant: 1, handle: 1 }, { unique: true });
    schema.index({ phone: 1 }, { unique: true, sparse: true });
    schema.index({ ref: 1 }, { unique: true, partialFilterExpression: { status: 'active' } });
    schema.index({ status: 1 });
    const Account = t.conn.model<Account>('Account', schema);
    await Account.init();
    const idx = await Account.listIndexes();
    const byName = Object.fromEntries(idx.map((i) => [i.name, i]));
    expect(Object.keys(byName).sort()).toEqual(['_id_', 'email_1', 'phone_1', 'ref_1', 'status_1', 'tenant_1_handle_1']);
    expect(byName.email_1!.unique).toBe(true);
    expect(byName.tenant_1_handle_1!.key).toEqual({ tenant: 1, handle: 1 });
    expect(byName.phone_1!.sparse).toBe(true);
    expect(byName.ref_1!.partialFilterExpression).toEqual({ status: 'active' });

    await Account.collection.dropIndex('status_1');
    const after = (await Account.listIndexes()).map((i) => i.name);
    expect(after).not.toContain('status_1');
    const missing = await Account.collection.dropIndex('nope_1').catch((e: unknown) => e);
    expect(errorCode(missing)).toBe(27);
  });

  it('is idempotent for identical specs and rejects conflicting options', async () => {
    const coll = t.conn.collection('idem');
    await coll.createIndex({ a: 1 }, { unique: true });
    await coll.createIndex({ a: 1 }, { unique: true });
    const err = await coll.createIndex({ a: 1 }, { name: 'a_1', unique: false }).catch((e: unknown) => e);
    expect([85, 86]).toContain(errorCode(err));
  });

  it('reports NamespaceNotFound when listing indexes of a missing collection', async () => {
    const err = await t.conn.db!.command({ listIndexes: 'does_not_exist' }).catch((e: unknown) => e);
    expect(errorCode(err)).toBe(26);
  });

  it('refuses to build a unique index over existing duplicates', async () => {
    const coll = t.conn.collection('predup');
    await coll.insertMany([{ k: 1 }, { k: 1 }]);
    const err = await coll.createIndex({ k: 1 }, { unique: true }).catch((e: unknown) => e);
    expect(errorCode(err)).toBe(11000);
    expect((await coll.indexes()).map((i) => i.name)).not.toContain('k_1');
  });
});

describe('unique enforcement', () => {
  it('raises a real E11000 on insert with keyPattern and keyValue', async () => {
    const coll = t.conn.collection('accounts');
    await coll.insertOne({ email: 'a@example.com', tenant: 't', handle: 'h1', status: 'x' });
    const err = (await coll
      .insertOne({ email: 'a@example.com', tenant: 't', handle: 'h2', status: 'x' })
      .catch((e: unknown) => e)) as { code: number; message: string; keyPattern: object; keyValue: object };
    expect(err.code).toBe(11000);
    expect(err.message).toMatch(
      new RegExp(`^E11000 duplicate key error collection: ${t.dbName}\\.accounts index: email_1 dup key: \\{ email: "a@example\\.com" \\}`),
    );
    expect(err.keyPattern).toEqual({ email: 1 });
    expect(err.keyValue).toEqual({ email: 'a@example.com' });
  });

  it('enforces compound unique indexes on the combination only', async () => {
    const coll = t.conn.collection('accounts');
    await coll.insertOne({ email: 'b@example.com', tenant: 't2', handle: 'h1', status: 'x' });
    const err = await coll.insertOne({ email: 'c@example.com', tenant: 't2', handle: 'h1', status: 'x' }).catch((e: unknown) => e);
    expect(errorCode(err)).toBe(11000);
    expect((err as { keyValue: object }).keyValue).toEqual({ tenant: 't2', handle: 'h1' });
  });

  it('skips documents without the field for sparse indexes', async () => {
    const coll = t.conn.collection('accounts');
    await coll.insertOne({ email: 'd@example.com', tenant: 't3', handle: 'a', status: 'x' });
    await coll.insertOne({ email: 'e@example.com', tenant: 't3', handle: 'b', status: 'x' });
    await coll.insertOne({ email: 'f@example.com', tenant: 't3', handle: 'c', status: 'x', phone: '1' });
    const err = await coll.insertOne({ email: 'g@example.com', tenant: 't3', handle: 'd', status: 'x', phone: '1' }).catch((e: unknown) => e);
    expect(errorCode(err)).toBe(11000);
  });

  it('only constrains documents matching a partialFilterExpression', async () => {
    const coll = t.conn.collection('accounts');
    await coll.insertOne({ email: 'p1@example.com', tenant: 'p', handle: '1', ref: 'R', status: 'closed' });
    await coll.insertOne({ email: 'p2@example.com', tenant: 'p', handle: '2', ref: 'R', status: 'active' });
    const err = await coll.insertOne({ email: 'p3@example.com', tenant: 'p', handle: '3', ref: 'R', status: 'active' }).catch((e: unknown) => e);
    expect(errorCode(err)).toBe(11000);
    await coll.insertOne({ email: 'p4@example.com', tenant: 'p', handle: '4', ref: 'R', status: 'closed' });
  });

  it('enforces uniqueness on update and on upsert, leaving the document unchanged', async () => {
    const coll = t.conn.collection('accounts');
    await coll.insertOne({ email: 'u1@example.com', tenant: 'u', handle: '1', status: 'x' });
    await coll.insertOne({ email: 'u2@example.com', tenant: 'u', handle: '2', status: 'x' });
    const err = await coll.updateOne({ email: 'u2@example.com' }, { $set: { email: 'u1@example.com', status: 'changed' } }).catch((e: unknown) => e);
    expect(errorCode(err)).toBe(11000);
    expect((await coll.findOne({ email: 'u2@example.com' }))!.status).toBe('x');
    const upErr = await coll
      .updateOne({ email: 'u3@example.com' }, { $set: { tenant: 'u', handle: '1' } }, { upsert: true })
      .catch((e: unknown) => e);
    expect(errorCode(upErr)).toBe(11000);
    expect(await coll.countDocuments({ email: 'u3@example.com' })).toBe(0);
    const famErr = await coll
      .findOneAndUpdate({ email: 'u2@example.com' }, { $set: { email: 'u1@example.com' } })
      .catch((e: unknown) => e);
    expect(errorCode(famErr)).toBe(11000);
  });

  it('mongoose surfaces the duplicate key error as usual', async () => {
    const User = t.conn.model('DupUser', new mongoose.Schema({ login: { type: String, unique: true } }));
    await User.init();
    await User.create({ login: 'same' });
    const err = await User.create({ login: 'same' }).catch((e: unknown) => e);
    expect((err as { name: string }).name).toBe('MongoServerError');
    expect(errorCode(err)).toBe(11000);
  });

  it('200 concurrent inserts over 150 distinct values: exactly 150 succeed, 50 get E11000', async () => {
    const Ticket = t.conn.model('Ticket', new mongoose.Schema({ code: { type: String, unique: true }, n: Number }));
    await Ticket.init();
    const attempts = Array.from({ length: 200 }, (_, i) => ({ code: `c${i % 150}`, n: i }));
    const results = await Promise.allSettled(attempts.map((a) => Ticket.create(a)));
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    const dup = results.filter((r) => r.status === 'rejected' && errorCode(r.reason) === 11000).length;
    expect(ok).toBe(150);
    expect(dup).toBe(50);
    expect(await Ticket.countDocuments()).toBe(150);
    expect((await Ticket.distinct('code')).length).toBe(150);
  });
});

describe('index use', () => {
  it('answers equality, $in, compound-prefix and sorted queries correctly on indexed fields', async () => {
    const coll = t.conn.collection('big');
    await coll.createIndex({ g: 1, n: 1 });
    await coll.createIndex({ k: 1 }, { unique: true });
    await coll.insertMany(Array.from({ length: 2000 }, (_, i) => ({ k: `k${i}`, g: i % 10, n: i })));
    expect((await coll.findOne({ k: 'k1234' }))!.n).toBe(1234);
    expect((await coll.find({ k: { $in: ['k1', 'k2', 'zz'] } }).toArray()).map((d) => d.n).sort()).toEqual([1, 2]);
    expect(await coll.countDocuments({ g: 3 })).toBe(200);
    const top = await coll.find({ g: 3 }).sort({ n: -1 }).limit(3).toArray();
    expect(top.map((d) => d.n)).toEqual([1993, 1983, 1973]);
    const firstK = await coll.find({}).sort({ k: 1 }).limit(2).toArray();
    expect(firstK.map((d) => d.k)).toEqual(['k0', 'k1']);
    const range = await coll.find({ k: { $gte: 'k1998', $lt: 'k2' } }).sort({ k: 1 }).toArray();
    expect(range.map((d) => d.k)).toEqual(['k1998', 'k1999']);
  });

  it('follows every update: nested paths, arrays, partial filters, and fields the update does not touch', async () => {
    const coll = t.conn.collection('followed');
    await coll.createIndex({ 'customer.mobile': 1 });
    await coll.createIndex({ tags: 1 });
    await coll.createIndex({ ref: 1 }, { partialFilterExpression: { status: 'active' } });
    await coll.createIndex({ status: 1, n: -1 });
    await coll.insertMany([
      { _id: 'a' as never, customer: { mobile: '1' }, tags: ['x'], ref: 'r1', status: 'active', n: 1, note: 'a' },
      { _id: 'b' as never, customer: { mobile: '2' }, tags: ['y'], ref: 'r2', status: 'new', n: 2, note: 'b' },
    ]);
    await coll.updateOne({ _id: 'a' as never }, { $set: { 'customer.mobile': '3' } });
    await coll.updateOne({ _id: 'a' as never }, { $push: { tags: 'z' } as never });
    await coll.updateOne({ _id: 'b' as never }, { $set: { status: 'active' } });
    await coll.updateOne({ _id: 'a' as never }, { $inc: { n: 10 }, $set: { note: 'only this' } });
    await coll.updateOne({ _id: 'b' as never }, { $unset: { customer: '' } });
    const ids = async (filter: object, hint: object) => (await coll.find(filter, { hint }).toArray()).map((d) => d._id).sort();
    expect(await ids({ 'customer.mobile': '1' }, { 'customer.mobile': 1 })).toEqual([]);
    expect(await ids({ 'customer.mobile': '3' }, { 'customer.mobile': 1 })).toEqual(['a']);
    expect(await ids({ 'customer.mobile': '2' }, { 'customer.mobile': 1 })).toEqual([]);
    expect(await ids({ tags: 'z' }, { tags: 1 })).toEqual(['a']);
    expect(await ids({ tags: 'x' }, { tags: 1 })).toEqual(['a']);
    // Partial: b entered the index when its status did.
    expect(await ids({ ref: 'r2', status: 'active' }, { ref: 1 })).toEqual(['b']);
    expect((await coll.find({ status: 'active' }, { hint: { status: 1, n: -1 } }).sort({ n: -1 }).toArray()).map((d) => [d._id, d.n])).toEqual([
      ['a', 11],
      ['b', 2],
    ]);
  });

  it('uses an index (not a collection scan) for indexed equality, per explain', async () => {
    const coll = t.conn.collection('big');
    const ex = await coll.find({ k: 'k5' }).explain();
    expect(JSON.stringify(ex.queryPlanner.winningPlan)).toMatch(/IXSCAN|IDHACK|EXPRESS/);
    const scan = await coll.find({ notIndexed: 1 }).explain();
    expect(JSON.stringify(scan.queryPlanner.winningPlan)).toMatch(/COLLSCAN/);
  });
});
