/**
 * How the gateway brings its collections and indexes to its schemas at start-up (src/db/modelIndexes.ts):
 * the first start creates them; a restart on unchanged indexes asks only listCollections and one
 * listIndexes per collection (what keeps a restart short); a declared index that went missing is built,
 * one whose options changed is rebuilt, and one no longer declared is dropped (the migration).
 * On the embedded engine, or on MONGODB_URI when set (in a database of its own, dropped afterwards).
 */
import mongoose, { Schema } from 'mongoose';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { startEmbeddedMongo, type EmbeddedMongo } from '@pgw/embedded-mongo';
import { syncModelIndexes } from '../../src/db/modelIndexes';

const EXTERNAL_URI = process.env.MONGODB_URI || undefined;
let engine: EmbeddedMongo | undefined;
let conn: mongoose.Connection;
const commands: string[] = [];

interface Thing {
  _id: string;
  a: number;
  b?: string;
  at?: Date;
}

beforeAll(async () => {
  engine = EXTERNAL_URI ? undefined : await startEmbeddedMongo({ port: 0 });
  // As connection.ts opens the gateway's: mongoose builds nothing by itself.
  conn = await mongoose
    .createConnection(EXTERNAL_URI ?? engine!.uri, { dbName: `model_indexes_${process.pid}_${Date.now()}`, autoIndex: false, autoCreate: false, monitorCommands: true })
    .asPromise();
  conn.getClient().on('commandStarted', (e) => commands.push(e.commandName));
  const things = new Schema<Thing>({ _id: String, a: Number, b: String, at: Date }, { versionKey: false });
  things.index({ a: 1, b: 1 }, { unique: true });
  things.index({ at: 1 }, { name: 'at_ttl', expireAfterSeconds: 3600 });
  conn.model<Thing>('Thing', things);
  // No index declared: its collection is created all the same, as mongoose's autoCreate did.
  conn.model('Plain', new Schema({ _id: String, n: Number }, { versionKey: false }));
});
beforeEach(() => {
  commands.length = 0;
});
afterAll(async () => {
  await conn?.dropDatabase();
  await conn?.close();
  await engine?.close();
});

async function indexes(collection: string) {
  const list = await conn.db!.collection(collection).indexes();
  return Object.fromEntries(list.map((i) => [i.name!, i]));
}

it('creates the collections and builds the declared indexes on a first start', async () => {
  await syncModelIndexes(conn);
  const names = (await conn.db!.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).sort();
  expect(names).toEqual(['plains', 'things']);
  const idx = await indexes('things');
  expect(idx.a_1_b_1).toMatchObject({ key: { a: 1, b: 1 }, unique: true });
  expect(idx.at_ttl).toMatchObject({ key: { at: 1 }, expireAfterSeconds: 3600 });
});

it('asks only listCollections and one listIndexes per collection when nothing changed', async () => {
  await syncModelIndexes(conn);
  expect(commands.sort()).toEqual(['listCollections', 'listIndexes', 'listIndexes']);
});

it('builds a missing index, rebuilds one whose options changed and drops one no longer declared', async () => {
  const things = conn.db!.collection('things');
  await things.dropIndex('a_1_b_1');
  await things.dropIndex('at_ttl');
  await things.createIndex({ at: 1 }, { name: 'at_ttl', expireAfterSeconds: 60 }); // an older retention
  await things.createIndex({ b: 1 }); // an index an older version declared
  await syncModelIndexes(conn);
  const idx = await indexes('things');
  expect(Object.keys(idx).sort()).toEqual(['_id_', 'a_1_b_1', 'at_ttl']);
  expect(idx.a_1_b_1).toMatchObject({ unique: true });
  expect(idx.at_ttl).toMatchObject({ expireAfterSeconds: 3600 });
  expect(commands).toContain('dropIndexes');
  expect(commands).toContain('createIndexes');
});
