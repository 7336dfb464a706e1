import type { mongo } from 'mongoose';

/** A mongoose model, for the one thing read from it here: its driver collection. */
export interface ModelWithCollection {
  collection: unknown;
}

/**
 * A model's collection with the MongoDB driver's API, typed by its stored record: for hot paths where
 * mongoose's query layer (casting, document hydration) only costs CPU, since the records written there
 * are complete. Mongoose's collection passes each call to the driver's; its type does not say so, hence
 * the one cast, here rather than at every use.
 */
export function driverCollection<T extends mongo.Document>(model: ModelWithCollection): mongo.Collection<T> {
  return model.collection as mongo.Collection<T>;
}

/**
 * How many documents match `filter`, stopping at `limit`, with the `count` command: one command whose
 * plan is the filter's (the driver's countDocuments is an aggregation, judged by the one number it
 * returns). For gauges read at scrape time (src/metrics/gauges.ts), on filters an index answers.
 */
export async function countMatching(model: CountableModel, filter: mongo.Filter<mongo.Document>, limit: number): Promise<number> {
  const db = model.db.db;
  if (!db) throw new Error('not connected');
  const res = await db.command({ count: model.collection.collectionName, query: filter, limit });
  return Number(res.n ?? 0);
}

/** A mongoose model, for its collection's name and its connection's driver database. */
export interface CountableModel {
  collection: { collectionName: string };
  db: { db?: mongo.Db };
}
