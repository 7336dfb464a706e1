import type mongoose from 'mongoose';
import { logger } from '../logger';
import { isNamespaceExists } from './errors';

/**
 * Brings each model's collection and indexes to what its schema declares before the first request: unique
 * indexes carry correctness. One listIndexes per collection on unchanged code, syncIndexes only where they
 * differ (docs/decisions/0006-index-sync-at-start-up.md). More: docs/decisions/notes/storage.md, "Index sync
 * at start-up".
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
