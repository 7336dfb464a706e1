import mongoose from 'mongoose';
import { logger } from '../logger';
import { isIndexConflict } from './errors';
import { recordQueryShapes } from './queryShapes';
import { WRITE_CONCERN } from './writeConcern';
import { embeddedEngine } from './embeddedEngine';

export interface DatabaseHandle {
  uri: string;
  /** 'external' = MONGODB_URI was given; 'embedded' = the in-process engine was started. */
  kind: 'external' | 'embedded';
  /** The in-process engine's Unix socket (its only listener); undefined with MONGODB_URI. */
  socketPath?: string;
  close(): Promise<void>;
}

/**
 * Connects mongoose to MONGODB_URI when given, otherwise starts the embedded engine in this process
 * (memory only, or journaled into `dataDir`). Logs which one so nobody mistakes a sandbox store for
 * production.
 */
export async function connectDatabase(opts: { mongodbUri?: string; dataDir?: string }): Promise<DatabaseHandle> {
  let uri: string;
  let stopEngine: (() => Promise<void>) | undefined;
  let kind: DatabaseHandle['kind'] = 'external';
  let socketPath: string | undefined;
  if (!opts.mongodbUri) {
    const engine = await embeddedEngine(opts.dataDir);
    uri = engine.uri;
    socketPath = engine.socketPath;
    stopEngine = () => engine.close();
    kind = 'embedded';
    logger.info({ dataDir: opts.dataDir ?? null, uri, startedEarly: engine.early }, opts.dataDir
      ? 'MONGODB_URI not set: started the embedded MongoDB-compatible engine (journaled to disk; development only)'
      : 'MONGODB_URI not set: started the embedded MongoDB-compatible engine in memory (development and tests only)');
  } else {
    uri = opts.mongodbUri;
    logger.info({ uri: redactUri(uri) }, 'Using MongoDB from MONGODB_URI');
  }
  mongoose.set('strictQuery', true);
  const shapesDir = process.env.PGW_QUERY_SHAPES;
  await mongoose.connect(uri, { serverSelectionTimeoutMS: 10_000, autoIndex: true, monitorCommands: Boolean(shapesDir), writeConcern: WRITE_CONCERN });
  if (shapesDir) recordQueryShapes(mongoose.connection.getClient(), shapesDir);
  // Unique indexes carry correctness (idempotency keys, reference numbers, key hashes): build them
  // before the first request is served rather than lazily in the background.
  await Promise.all(Object.values(mongoose.models).map((model) => initModel(model)));
  return {
    uri,
    kind,
    socketPath,
    async close() {
      await mongoose.disconnect();
      if (stopEngine) await stopEngine();
    },
  };
}

/**
 * Builds a model's indexes and retires the ones an older version of this code declared: the gateway's
 * collections are its own, so an index the schema no longer declares (the timers' old claim index, the
 * events' hook index before it became partial) is dropped rather than left to cost every write. An
 * index of the same name with other options (one that has since become sparse, say) makes MongoDB
 * answer IndexOptionsConflict at build time; syncIndexes drops and rebuilds it.
 */
async function initModel(model: mongoose.Model<any>): Promise<void> {
  try {
    await model.init();
  } catch (err) {
    if (!isIndexConflict(err)) throw err;
  }
  const dropped = await model.syncIndexes();
  if (dropped.length > 0) {
    logger.warn({ collection: model.collection.collectionName, dropped }, 'dropped indexes an older version declared (migration)');
  }
}

export async function databaseReady(): Promise<boolean> {
  try {
    const db = mongoose.connection.db;
    if (!db || mongoose.connection.readyState !== 1) return false;
    await db.admin().ping();
    return true;
  } catch {
    return false;
  }
}

function redactUri(uri: string): string {
  return uri.replace(/\/\/([^@/]+)@/, '//[credentials]@');
}
