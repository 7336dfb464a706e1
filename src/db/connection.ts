import mongoose from 'mongoose';
import { logger } from '../logger';
import { isIndexConflict } from './errors';
import { recordQueryShapes } from './queryShapes';
import { WRITE_CONCERN } from './writeConcern';

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
    // Loaded lazily: production never needs the engine's code.
    const embedded = await import('@pgw/embedded-mongo');
    const engine = await startEmbeddedOnSocket(embedded, opts.dataDir);
    uri = engine.uri;
    socketPath = engine.socketPath;
    stopEngine = () => engine.close();
    kind = 'embedded';
    logger.info({ dataDir: opts.dataDir ?? null, uri }, opts.dataDir
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

type EmbeddedModule = typeof import('@pgw/embedded-mongo');

/**
 * The embedded engine listening on an owner-only Unix socket in a private directory of os.tmpdir(),
 * and on nothing else: it has no authentication, so a TCP port (even on loopback) would let any local
 * process read and write the gateway's data. Several processes sharing one engine run `npm run db`.
 * Where the socket cannot be made (Windows, an unwritable temp directory) start-up fails rather than
 * fall back to TCP.
 */
async function startEmbeddedOnSocket(
  { startEmbeddedMongo, startEmbeddedMongoInWorker, SocketListenError }: EmbeddedModule,
  dataDir: string | undefined,
) {
  const remedy = 'set MONGODB_URI, or run `npm run db` and point MONGODB_URI at it';
  if (process.platform === 'win32') {
    throw new Error(`the in-process embedded engine needs a Unix domain socket, which Windows does not offer here: ${remedy}`);
  }
  // DB_REPAIR_TRUNCATE: the operator's explicit choice to drop a corrupt journal file's damaged end (engine README).
  const options = { tcp: false, socketPath: true as const, dataDir, repairTruncate: process.env.DB_REPAIR_TRUNCATE === 'true' };
  try {
    // The engine runs in a worker thread of this process: its work takes the second core, and the stored
    // data sits in the worker's heap, so this thread's garbage collection does not grow with the data.
    // EMBEDDED_DB_THREAD=false keeps it on this thread (to profile both in one CPU profile, say).
    if (process.env.EMBEDDED_DB_THREAD === 'false') return await startEmbeddedMongo(options);
    return await startEmbeddedMongoInWorker({ ...options, workerUrl: bundledWorkerUrl() });
  } catch (err) {
    if (!(err instanceof SocketListenError)) throw err; // e.g. a data directory that cannot be read
    throw new Error(`the in-process embedded engine ${err.message}; set TMPDIR to a directory this user can write, or ${remedy}`, { cause: err });
  }
}

/**
 * Run from the bundle (`npm start`: dist/main.js), the worker's entry is the bundle's own
 * dist/engine-worker.js (build.mjs); from source the package finds its entry itself.
 */
function bundledWorkerUrl(): URL | undefined {
  return import.meta.url.endsWith('.js') ? new URL('./engine-worker.js', import.meta.url) : undefined;
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
