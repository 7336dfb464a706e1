import mongoose from 'mongoose';
import { logger } from '../logger';
import { PROCESS_ID } from '../processId';
import { syncModelIndexes } from './modelIndexes';
import { recordQueryShapes } from './queryShapes';
import { timeDatabaseCommands } from './commandTiming';
import { flushAllBatches } from './batching';
import { CLIENT_OPTIONS } from './writeConcern';
import { embeddedEngine, routeEngineLog } from './embeddedEngine';

/** The embedded engine's routine lines; any other line it writes is something an operator should see. */
const ROUTINE_ENGINE_LINES: ReadonlySet<string> = new Set([
  'embedded db: data loaded',
  'embedded db: deferred indexes built',
  'embedded db: snapshot written',
  'embedded db: journal closed',
]);

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
  // A second gateway of this process on the same MONGODB_URI shares the connection (mongoose's default
  // connection is the process's): the database is what gateways share. It closes with the last of them.
  if (opts.mongodbUri && shared?.uri === opts.mongodbUri) {
    const s = shared;
    await s.opened;
    s.users++;
    return sharedHandle(s);
  }
  if (opts.mongodbUri) {
    const s: SharedConnection = { uri: opts.mongodbUri, users: 1, opened: Promise.resolve(), close: async () => undefined };
    s.opened = connectOnce(opts).then((handle) => {
      s.close = handle.close;
    });
    shared = s;
    try {
      await s.opened;
    } catch (err) {
      if (shared === s) shared = null;
      throw err;
    }
    return sharedHandle(s);
  }
  return connectOnce(opts);
}

/** The connection of this process's gateways on one MONGODB_URI, and how many use it. */
interface SharedConnection {
  uri: string;
  users: number;
  opened: Promise<void>;
  close(): Promise<void>;
}
// eslint-disable-next-line no-restricted-syntax -- mongoose's one connection, shared by the process's gateways on one MONGODB_URI
let shared: SharedConnection | null = null;

function sharedHandle(s: SharedConnection): DatabaseHandle {
  let closed = false;
  return {
    uri: s.uri,
    kind: 'external',
    async close() {
      if (closed) return;
      closed = true;
      if (--s.users > 0) {
        // Writes nobody awaits still go out before this gateway reports stopped; the connection stays.
        await flushAllBatches();
        return;
      }
      if (shared === s) shared = null;
      await s.close();
    },
  };
}

async function connectOnce(opts: { mongodbUri?: string; dataDir?: string }): Promise<DatabaseHandle> {
  let uri: string;
  let stopEngine: (() => Promise<void>) | undefined;
  let kind: DatabaseHandle['kind'] = 'external';
  let socketPath: string | undefined;
  if (!opts.mongodbUri) {
    routeEngineLog((msg, extra) => (ROUTINE_ENGINE_LINES.has(msg) ? logger.info(extra ?? {}, msg) : logger.warn(extra ?? {}, msg)));
    // The engine's code is loaded only here, and only for EMBEDDED_DB_THREAD=false (embeddedEngine.ts).
    const engine = await embeddedEngine(opts.dataDir, async (options) => (await import('@pgw/embedded-mongo')).startEmbeddedMongo(options));
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
  const connectStart = performance.now();
  // autoIndex/autoCreate off: syncModelIndexes checks and builds every model's indexes in one pass below.
  timeDatabaseCommands();
  // The driver's command events only for the query-shape recorder: they decode every reply.
  await connectWithin(uri, shapesDir ? { ...CLIENT_OPTIONS, monitorCommands: true } : CLIENT_OPTIONS, FIRST_CONNECT_MS);
  if (shapesDir) recordQueryShapes(mongoose.connection.getClient(), shapesDir);
  const indexesStart = performance.now();
  await syncModelIndexes(mongoose.connection);
  // How long a start spends here (a restart's time is watched: bench/profile/restartPhases.ts).
  logger.info({ connectMs: Math.round(indexesStart - connectStart), indexesMs: Math.round(performance.now() - indexesStart), models: Object.keys(mongoose.models).length }, 'database connected, indexes checked');
  return {
    uri,
    kind,
    socketPath,
    async close() {
      // Writes nobody awaits (hooks-done marks, overview counters) still batched go out first.
      await flushAllBatches();
      await mongoose.disconnect();
      if (stopEngine) await stopEngine();
    },
  };
}

/** A database started beside the gateway (compose, a test) may take a few seconds to listen. */
const FIRST_CONNECT_MS = 10_000;

/**
 * The first connection, retried until `withinMs`: each try waits only the short server selection of
 * CLIENT_OPTIONS, which is what every later operation waits too.
 */
async function connectWithin(uri: string, options: mongoose.ConnectOptions, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      await mongoose.connect(uri, options);
      return;
    } catch (err) {
      if (Date.now() >= deadline || (err as { name?: string }).name !== 'MongooseServerSelectionError') throw err;
      logger.warn({ err }, 'database not reachable yet; trying again');
      await mongoose.disconnect().catch(() => undefined);
    }
  }
}

/**
 * /readyz: the database answers and accepts a write. A ping alone passes on a database that refuses
 * writes (the embedded engine on a full disk, a replica set without a majority), where every POST
 * would answer 503. The write is one small upsert of this process's own document, under the same
 * write concern (and deadline) as everything else the gateway writes.
 */
export async function databaseReady(): Promise<boolean> {
  try {
    const db = mongoose.connection.db;
    if (!db || mongoose.connection.readyState !== 1) return notReady(`the connection is ${mongoose.STATES[mongoose.connection.readyState] ?? 'absent'}`);
    await db.admin().ping();
    await db.collection<{ _id: string }>(READINESS_COLLECTION).updateOne({ _id: PROCESS_ID }, { $set: { checked_at: new Date() } }, { upsert: true });
    return true;
  } catch (err) {
    return notReady('the ping or the readiness write failed', err);
  }
}

/** At most one "not ready" line per this long, however often /readyz is probed. */
const NOT_READY_LOG_MS = 10_000;
// When this process last said why it is not ready (a log's rate, nothing more).
// eslint-disable-next-line no-restricted-syntax -- a log line's rate, for mongoose's one connection
let notReadyLoggedAt = -Infinity;

/**
 * Says why /readyz answers 503 (a supervisor sees only the status): an operator, or a test that waited
 * for readiness in vain, reads whether the connection never came back or the database refused the write.
 */
function notReady(why: string, err?: unknown): false {
  const now = performance.now();
  if (now - notReadyLoggedAt >= NOT_READY_LOG_MS) {
    notReadyLoggedAt = now;
    logger.warn({ err, readyState: mongoose.connection.readyState }, `not ready: ${why}`);
  }
  return false;
}

/** pgw_database_up: the database answers a ping (no write: a scrape must not write). */
export async function databaseAnswers(): Promise<boolean> {
  const db = mongoose.connection.db;
  if (!db || mongoose.connection.readyState !== 1) return false;
  return db.admin().ping().then(() => true, () => false);
}

/** One document per gateway process that answered /readyz: what its last readiness write wrote. */
const READINESS_COLLECTION = 'readiness_checks';

function redactUri(uri: string): string {
  return uri.replace(/\/\/([^@/]+)@/, '//[credentials]@');
}
