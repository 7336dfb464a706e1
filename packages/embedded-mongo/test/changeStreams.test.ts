import mongoose from 'mongoose';
import type { ChangeStream, ChangeStreamDocument, Document, ResumeToken } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDb, type TestDb } from './helpers';

let t: TestDb;
interface OrderDoc {
  ref: string;
  status: string;
  amount: number;
}
let Order: mongoose.Model<OrderDoc>;
beforeAll(async () => {
  t = await startTestDb('changes');
  Order = t.conn.model<OrderDoc>('Order', new mongoose.Schema<OrderDoc>({ ref: String, status: String, amount: Number }));
  await Order.init();
});
afterAll(async () => {
  await t.close();
});

/** Reads `n` events from a change stream (no wall-clock assertions; the suite timeout bounds it). */
async function take<T extends Document>(stream: ChangeStream<T>, n: number): Promise<ChangeStreamDocument<T>[]> {
  const out: ChangeStreamDocument<T>[] = [];
  while (out.length < n) out.push(await stream.next());
  return out;
}

/** Waits until the server-side cursor exists, so that writes made next are seen by the stream. */
async function opened(stream: ChangeStream): Promise<void> {
  await stream.tryNext();
}

describe('change streams', () => {
  it('receives inserts and updates with the full document (updateLookup)', async () => {
    const stream = Order.collection.watch([], { fullDocument: 'updateLookup' });
    await opened(stream);
    const o = await Order.create({ ref: 'A1', status: 'new', amount: 5 });
    await Order.updateOne({ _id: o._id }, { $set: { status: 'paid' } });
    const [ins, upd] = await take(stream, 2);
    await stream.close();
    expect(ins!.operationType).toBe('insert');
    expect(ins!.operationType === 'insert' && ins!.fullDocument.ref).toBe('A1');
    expect(upd!.operationType).toBe('update');
    if (upd!.operationType !== 'update') throw new Error('unreachable');
    expect(upd!.fullDocument!.status).toBe('paid');
    expect(upd!.fullDocument!.amount).toBe(5);
    expect(upd!.updateDescription.updatedFields).toMatchObject({ status: 'paid' });
    expect(String(upd!.documentKey._id)).toBe(String(o._id));
    expect(upd!.ns).toEqual({ db: t.dbName, coll: 'orders' });
  });

  it('applies a $match stage after $changeStream', async () => {
    const stream = Order.collection.watch([{ $match: { operationType: 'insert', 'fullDocument.status': 'vip' } }]);
    await opened(stream);
    await Order.create({ ref: 'B1', status: 'plain', amount: 1 });
    await Order.create({ ref: 'B2', status: 'vip', amount: 2 });
    const [ev] = await take(stream, 1);
    await stream.close();
    expect(ev!.operationType === 'insert' && ev!.fullDocument.ref).toBe('B2');
  });

  it('a pipeline that rewrites the change never changes the stored document', async () => {
    const stream = Order.collection.watch([{ $match: { operationType: 'insert' } }, { $set: { 'fullDocument.status': 'rewritten' } }, { $unset: 'fullDocument.amount' }]);
    await opened(stream);
    const o = await Order.create({ ref: 'S1', status: 'kept', amount: 3 });
    const [ev] = await take(stream, 1);
    await stream.close();
    expect(ev!.operationType === 'insert' && ev!.fullDocument).toMatchObject({ ref: 'S1', status: 'rewritten' });
    expect(ev!.operationType === 'insert' && 'amount' in ev!.fullDocument).toBe(false);
    expect(await Order.findById(o._id).lean()).toMatchObject({ ref: 'S1', status: 'kept', amount: 3 });
  });

  it('reports deletes and replaces', async () => {
    const stream = Order.collection.watch();
    await opened(stream);
    const o = await Order.create({ ref: 'C1', status: 'x', amount: 1 });
    await Order.collection.replaceOne({ _id: o._id }, { ref: 'C1', status: 'replaced', amount: 2 });
    await Order.deleteOne({ _id: o._id });
    const evs = await take(stream, 3);
    await stream.close();
    expect(evs.map((e) => e.operationType)).toEqual(['insert', 'replace', 'delete']);
  });

  it('resumes after a token (resumeAfter) and starts after one (startAfter)', async () => {
    const first = Order.collection.watch();
    await opened(first);
    await Order.create({ ref: 'D1', status: 's', amount: 1 });
    await Order.create({ ref: 'D2', status: 's', amount: 2 });
    await Order.create({ ref: 'D3', status: 's', amount: 3 });
    const evs = await take(first, 3);
    await first.close();
    const token: ResumeToken = evs[0]!._id;

    const resumed = Order.collection.watch([], { resumeAfter: token });
    const next = await take(resumed, 2);
    await resumed.close();
    expect(next.map((e) => (e.operationType === 'insert' ? e.fullDocument.ref : '?'))).toEqual(['D2', 'D3']);

    const started = Order.collection.watch([], { startAfter: evs[1]!._id });
    const [third] = await take(started, 1);
    await started.close();
    expect(third!.operationType === 'insert' && third!.fullDocument.ref).toBe('D3');
  });

  it('a stream resumed behind hundreds of changes gets each one whole (documents, update descriptions)', async () => {
    const stream = Order.collection.watch([]);
    await opened(stream);
    const marker = await Order.create({ ref: 'R-start', status: 'new', amount: 0 });
    const [first] = await take(stream, 1);
    await stream.close();
    expect(first!.operationType === 'insert' && String(first!.fullDocument._id)).toBe(String(marker._id));
    // More changes than the newest few the embedded engine keeps as objects: the rest it keeps as BSON.
    const docs = await Order.insertMany(Array.from({ length: 300 }, (_, i) => ({ ref: `R${i}`, status: 'new', amount: i })));
    for (const d of docs) await Order.updateOne({ _id: d._id }, { $set: { status: 'paid' }, $inc: { amount: 1000 } });
    await Order.deleteOne({ _id: docs[0]!._id });

    const resumed = Order.collection.watch([], { resumeAfter: first!._id, fullDocument: 'whenAvailable' });
    const evs = await take(resumed, 601);
    await resumed.close();
    const inserts = evs.filter((e) => e.operationType === 'insert');
    const updates = evs.filter((e) => e.operationType === 'update');
    expect([inserts.length, updates.length, evs[600]!.operationType]).toEqual([300, 300, 'delete']);
    expect(inserts.map((e) => (e.operationType === 'insert' ? `${e.fullDocument.ref}:${e.fullDocument.amount}` : ''))).toEqual(
      docs.map((_, i) => `R${i}:${i}`),
    );
    expect(
      updates.map((e) => (e.operationType === 'update' ? [e.updateDescription.updatedFields, e.updateDescription.removedFields] : [])),
    ).toEqual(docs.map((_, i) => [{ status: 'paid', amount: 1000 + i }, []]));
    expect(String(evs[600]!.operationType === 'delete' && evs[600]!.documentKey._id)).toBe(String(docs[0]!._id));
  });

  it('only sees transaction writes once committed, and never aborted ones', async () => {
    const stream = Order.collection.watch([{ $match: { operationType: 'insert' } }]);
    await opened(stream);
    const s1 = await t.conn.startSession();
    s1.startTransaction();
    await Order.create([{ ref: 'T-aborted', status: 'x', amount: 0 }], { session: s1 });
    await s1.abortTransaction();
    await s1.endSession();
    await t.conn.transaction(async (session) => {
      await Order.create([{ ref: 'T-committed', status: 'x', amount: 0 }], { session });
    });
    const [ev] = await take(stream, 1);
    await stream.close();
    expect(ev!.operationType === 'insert' && ev!.fullDocument.ref).toBe('T-committed');
  });

  it('a database-level stream sees several collections', async () => {
    const stream = t.conn.db!.watch();
    await opened(stream);
    await t.conn.collection('dbw_a').insertOne({ a: 1 });
    await t.conn.collection('dbw_b').insertOne({ b: 1 });
    const evs = await take(stream, 2);
    await stream.close();
    expect(evs.map((e) => ('ns' in e ? (e.ns as { coll: string }).coll : ''))).toEqual(['dbw_a', 'dbw_b']);
  });

  it('mongoose Model.watch emits change events', async () => {
    // startAtOperationTime pins the start point, whenever the driver actually opens the cursor.
    const { operationTime } = await t.conn.db!.command({ ping: 1 });
    const stream = Order.watch([{ $match: { 'fullDocument.ref': 'M1' } }], {
      fullDocument: 'updateLookup',
      startAtOperationTime: operationTime,
    });
    const got: Array<{ operationType: string }> = [];
    const done = new Promise<void>((resolve) =>
      stream.on('change', (c: { operationType: string }) => {
        got.push(c);
        if (got.length === 2) resolve();
      }),
    );
    const o = await Order.create({ ref: 'M1', status: 'new', amount: 1 });
    await Order.updateOne({ _id: o._id }, { $set: { amount: 2 } });
    await done;
    await stream.close();
    expect(got.map((c) => c.operationType)).toEqual(['insert', 'update']);
  });
});
