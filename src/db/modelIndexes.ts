import type mongoose from 'mongoose';
import { logger } from '../logger';
import { isNamespaceExists } from './errors';

/**
 * Brings each model's collection and indexes to what its schema declares, before the first request is
 * served: unique indexes carry correctness (idempotency keys, reference numbers, key hashes), so they are
 * built now rather than lazily in the background.
 *
 * A restart on unchanged code finds every index in place, so it costs one listCollections for the
 * database and one listIndexes per collection, all at once, and nothing else (mongoose's own start-up
 * sent a create and a createIndex per declared index, one after another, then syncIndexes' create and
 * listIndexes: about 90 commands instead of 18). A collection whose indexes differ from its schema's,
 * as mongoose's diffIndexes compares them (keys, unique, sparse, partialFilterExpression,
 * expireAfterSeconds, collation), goes through syncIndexes, the migration for existing data directories
 * and databases: the gateway's collections are its own, so an index the schema no longer declares (the
 * timers' old claim index, the events' hook index before it became partial) is dropped rather than left
 * to cost every write, and one whose options changed (one that has since become sparse, a TTL whose
 * retention changed) is dropped and rebuilt. Standard commands only: the same holds on a real MongoDB.
 *
 * The connection is opened with autoIndex and autoCreate off (connection.ts), so that mongoose does not
 * also send its own per-index createIndex commands when the models are compiled.
 */
export async function syncModelIndexes(connection: mongoose.Connection): Promise<void> {
  const db = connection.db;
  if (!db) throw new Error('syncModelIndexes: the connection is not open');
  const existing = new Set((await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name));
  await Promise.all(Object.values(connection.models).map((model) => syncModel(model, existing.has(model.collection.collectionName))));
}

async function syncModel(model: mongoose.Model<any>, exists: boolean): Promise<void> {
  // Created even without an index to build, as mongoose's autoCreate did: a collection is then there for
  // a change stream or a transaction's first write. Another process may have created it meanwhile.
  if (!exists) {
    await model.createCollection().catch((err: unknown) => {
      if (!isNamespaceExists(err)) throw err;
    });
  }
  const { toDrop, toCreate } = await model.diffIndexes();
  if (toDrop.length === 0 && toCreate.length === 0) return;
  const dropped = await model.syncIndexes();
  if (dropped.length > 0) {
    logger.warn({ collection: model.collection.collectionName, dropped }, 'dropped indexes an older version declared (migration)');
  }
}
