import type mongoose from 'mongoose';
import { logger } from '../logger';
import { isNamespaceExists } from './errors';

/**
 * Brings each model's collection and indexes to what its schema declares, before the first request is
 * served: unique indexes carry correctness (idempotency keys, reference numbers, key hashes), so they are
 * built now rather than lazily in the background. On unchanged code this is one listCollections and one
 * listIndexes per collection, sent at once. A collection whose indexes differ from its schema's (as
 * mongoose's diffIndexes compares them) goes through syncIndexes: the collections are the gateway's own,
 * so an index the schema no longer declares is dropped, and one whose options changed is rebuilt.
 * Standard commands only, so the same holds on a real MongoDB. The connection has autoIndex and
 * autoCreate off (connection.ts), so mongoose does not also send its own per-index commands.
 * (see docs/decisions/0006-index-sync-at-start-up.md)
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
