import mongoose, { Schema } from 'mongoose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmbeddedMongo, type EmbeddedMongo } from '@pgw/embedded-mongo';
import { findByIdBatched, insertBatched, updateByIdBatched, updateIfMatchBatched, updateOneBatched } from '../../src/db/batching';

/** The batched helpers of src/db/batching.ts over the real (embedded) database, counting commands. */
let engine: EmbeddedMongo;
let conn: mongoose.Connection;
const commands: string[] = [];

interface Thing {
  _id: string;
  n: number;
  tag?: string;
  done?: boolean;
}

let Things: mongoose.Model<Thing>;

beforeAll(async () => {
  engine = await startEmbeddedMongo({ port: 0 });
  conn = await mongoose.createConnection(engine.uri, { monitorCommands: true }).asPromise();
  conn.getClient().on('commandStarted', (e) => commands.push(`${e.commandName} ${String((e.command as Record<string, unknown>)[e.commandName])}`));
  Things = conn.model<Thing>('BatchedThing', new Schema<Thing>({ _id: String, n: Number, tag: String, done: Boolean }, { versionKey: false }));
  await Things.init();
  await Things.collection.createIndex({ tag: 1 }, { unique: true, sparse: true });
});

afterAll(async () => {
  await conn?.close();
  await engine?.close();
});

it('inserts of one turn go out as one command; a duplicate fails its own document only, with 11000', async () => {
  commands.length = 0;
  const results = await Promise.allSettled([
    insertBatched(Things, { _id: 'a', n: 1, tag: 'x' }),
    insertBatched(Things, { _id: 'b', n: 2, tag: 'x' }),
    insertBatched(Things, { _id: 'c', n: 3 }),
  ]);
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: 11000, keyValue: { tag: 'x' } });
  expect(commands.filter((c) => c.startsWith('insert'))).toEqual(['insert batchedthings']);
  expect((await Things.find().sort({ _id: 1 }).lean()).map((t) => t._id)).toEqual(['a', 'c']);
});

it('reads by id of one turn share one find, duplicates included', async () => {
  commands.length = 0;
  const [a, a2, missing] = await Promise.all([findByIdBatched<Thing>(Things, 'a'), findByIdBatched<Thing>(Things, 'a'), findByIdBatched<Thing>(Things, 'zz')]);
  expect([a?.n, a2?.n, missing]).toEqual([1, 1, null]);
  expect(commands).toEqual(['find batchedthings']);
});

it('updateOneBatched: one statement per document in one command; updateByIdBatched: one statement for all', async () => {
  commands.length = 0;
  await Promise.all([updateOneBatched(Things, { _id: 'a' }, { $inc: { n: 10 } }), updateOneBatched(Things, { _id: 'c' }, { $inc: { n: 20 } })]);
  expect(commands).toEqual(['update batchedthings']);
  commands.length = 0;
  const statements: number[] = [];
  conn.getClient().once('commandStarted', (e) => statements.push((e.command.updates as unknown[]).length));
  await Promise.all(['a', 'c', 'a', 'nothere'].map((id) => updateByIdBatched(Things, 'done', id, { $set: { done: true } })));
  expect(commands).toEqual(['update batchedthings']);
  expect(statements).toEqual([1]);
  expect(await Things.find().sort({ _id: 1 }).lean()).toEqual([
    { _id: 'a', n: 11, tag: 'x', done: true },
    { _id: 'c', n: 23, done: true },
  ]);
});

it('updateIfMatchBatched: conditional writes of one turn in one command, each told whether it applied; a missing document stays missing', async () => {
  await insertBatched(Things, { _id: 'v', n: 0 });
  commands.length = 0;
  // Two writers read n = 0: of their two version-conditional writes in the same command, exactly one applies.
  const results = await Promise.all([
    updateIfMatchBatched(Things, { _id: 'v', n: 0 }, { $inc: { n: 1 }, $set: { tag: 'first' } }),
    updateIfMatchBatched(Things, { _id: 'v', n: 0 }, { $inc: { n: 1 }, $set: { tag: 'second' } }),
    updateIfMatchBatched(Things, { _id: 'a', n: 11 }, { $set: { done: false } }),
    updateIfMatchBatched(Things, { _id: 'gone', n: 0 }, { $inc: { n: 1 } }),
  ]);
  expect(results).toEqual([true, false, true, false]);
  expect(commands.filter((c) => c.startsWith('update'))).toEqual(['update batchedthings']);
  expect(await Things.findById('v').lean()).toEqual({ _id: 'v', n: 1, tag: 'first' });
  expect(await Things.findById('a').lean()).toMatchObject({ n: 11, done: false });
  expect(await Things.findById('gone').lean()).toBeNull();
  // A conflict on another unique index is an error of its own statement, not a miss.
  await expect(updateIfMatchBatched(Things, { _id: 'v', n: 1 }, { $set: { tag: 'x' } })).rejects.toMatchObject({ code: 11000, keyValue: { tag: 'x' } });
});

it('updateIfMatchBatched on a deleted document inserts nothing, not even for a moment: one command, no clean-up', async () => {
  // A webhook delivery deleted with its endpoint (or a payment by a sandbox reset) while its last write is under way.
  await insertBatched(Things, { _id: 'deleted', n: 0 });
  await Things.deleteOne({ _id: 'deleted' });
  const upserted: unknown[] = [];
  const onReply = (e: { commandName: string; reply: unknown }) => {
    if (e.commandName === 'update') upserted.push(...((e.reply as { upserted?: unknown[] }).upserted ?? []));
  };
  conn.getClient().on('commandSucceeded', onReply);
  commands.length = 0;
  try {
    const results = await Promise.all([
      updateIfMatchBatched(Things, { _id: 'deleted', n: 0 }, { $inc: { n: 1 }, $set: { tag: 'phantom' } }),
      updateIfMatchBatched(Things, { _id: 'a', n: 11 }, { $set: { done: true } }),
    ]);
    expect(results).toEqual([false, true]);
  } finally {
    conn.getClient().off('commandSucceeded', onReply);
  }
  // No document was inserted (which a crash, or a failed delete, would have left behind), so no second step.
  expect(upserted).toEqual([]);
  expect(commands).toEqual(['update batchedthings']);
  expect(await Things.findById('deleted').lean()).toBeNull();
});
