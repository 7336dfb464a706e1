import type { EmbeddedMongo, EmbeddedMongoOptions } from '@pgw/embedded-mongo';

/**
 * Starts the engine on the calling thread (EMBEDDED_DB_THREAD=false). connectDatabase hands it in, so
 * that this module does not import the engine itself: the launcher's bundle (dist/main.js) then holds
 * only the worker's starter, not the whole engine it would read and compile before starting the worker.
 */
export type InProcessStart = (options: EmbeddedMongoOptions) => Promise<EmbeddedMongo>;

/**
 * Starts the in-process embedded engine (no MONGODB_URI), early when `npm start`'s launcher asks, so that the
 * engine reads its data directory on the other core while this thread parses the gateway. The launcher and
 * the gateway each bundle a copy of this module: the engine is handed over through a global slot, never by
 * comparing classes. More: docs/decisions/notes/storage.md, "Starting the embedded engine early".
 */
const EARLY = Symbol.for('pgw.embeddedEngine.early');

interface EarlyStart {
  dataDir: string | undefined;
  repairTruncate: boolean;
  engine: Promise<EmbeddedMongo>;
}

type Slot = { [EARLY]?: EarlyStart };

const REMEDY = 'set MONGODB_URI, or run `npm run db` and point MONGODB_URI at it';

/** The data directory `npm start` uses: ./data unless DATA_DIR says otherwise (DATA_DIR= means memory only). */
export function startDataDir(env: NodeJS.ProcessEnv): string | undefined {
  return env.DATA_DIR === undefined ? './data' : env.DATA_DIR.trim() || undefined;
}

/** DB_REPAIR_TRUNCATE: the operator's explicit choice to drop a corrupt journal file's damaged end (engine README). */
function repairTruncate(): boolean {
  return process.env.DB_REPAIR_TRUNCATE === 'true';
}

/**
 * Starts the engine's worker now and leaves it for connectDatabase. Only the worker-thread layout
 * (the default) gains from it: in-process (EMBEDDED_DB_THREAD=false) loading would hold this thread.
 */
export function startEmbeddedEarly(dataDir: string | undefined): void {
  if (process.env.EMBEDDED_DB_THREAD === 'false') return;
  const engine = startEmbeddedOnSocket(dataDir);
  // Handled here so that a failure waiting for the gateway is not an unhandled rejection; the gateway
  // awaits `engine` itself and reports the failure as it reports any start-up error.
  engine.catch(() => undefined);
  (globalThis as Slot)[EARLY] = { dataDir, repairTruncate: repairTruncate(), engine };
}

/** The engine for `dataDir`: the one started early for it, or a new one. */
export async function embeddedEngine(dataDir: string | undefined, inProcess: InProcessStart): Promise<EmbeddedMongo & { early: boolean }> {
  const slot = globalThis as Slot;
  const early = slot[EARLY];
  delete slot[EARLY];
  if (early) {
    if (early.dataDir === dataDir && early.repairTruncate === repairTruncate()) return Object.assign(await early.engine, { early: true });
    // Started for other settings (the environment changed in between): not used, and closed before a
    // second engine opens the same files.
    await early.engine.then((e) => e.close(), () => undefined);
  }
  return Object.assign(await startEmbeddedOnSocket(dataDir, inProcess), { early: false });
}

/**
 * The embedded engine listening on an owner-only Unix socket in a private directory of os.tmpdir(),
 * and on nothing else: it has no authentication, so a TCP port (even on loopback) would let any local
 * process read and write the gateway's data. Several processes sharing one engine run `npm run db`.
 * Where the socket cannot be made (Windows, an unwritable temp directory) start-up fails rather than
 * fall back to TCP.
 */
async function startEmbeddedOnSocket(dataDir: string | undefined, inProcess?: InProcessStart): Promise<EmbeddedMongo> {
  if (process.platform === 'win32') {
    throw new Error(`the in-process embedded engine needs a Unix domain socket, which Windows does not offer here: ${REMEDY}`);
  }
  // Loaded lazily: production never needs the engine's code. The worker's starter alone
  // ('@pgw/embedded-mongo/threaded') does not load the engine on this thread: evaluating the engine's
  // modules (mingo above all, ~0.1 s) would delay the worker's start, which a restart waits for.
  // (startEmbeddedEarly never passes `inProcess`: it starts nothing for EMBEDDED_DB_THREAD=false.)
  const { SocketListenError, startEmbeddedMongoInWorker } = await import('@pgw/embedded-mongo/threaded');
  const options = { tcp: false, socketPath: true as const, dataDir, repairTruncate: repairTruncate(), logger: engineLogLine };
  try {
    // The engine runs in a worker thread of this process: its work takes the second core, and the stored
    // data sits in the worker's heap, so this thread's garbage collection does not grow with the data.
    // EMBEDDED_DB_THREAD=false keeps it on this thread (to profile both in one CPU profile, say).
    if (process.env.EMBEDDED_DB_THREAD === 'false') {
      if (!inProcess) throw new Error('embeddedEngine: EMBEDDED_DB_THREAD=false needs the in-process starter');
      return await inProcess(options);
    }
    return await startEmbeddedMongoInWorker({ ...options, workerUrl: bundledWorkerUrl() });
  } catch (err) {
    if (!(err instanceof SocketListenError)) throw err; // e.g. a data directory that cannot be read
    throw new Error(`the in-process embedded engine ${err.message}; set TMPDIR to a directory this user can write, or ${REMEDY}`, { cause: err });
  }
}

/**
 * The engine's own log lines (a write the journal refused, an index dropped at recovery, the load's
 * summary) for the gateway's log. The launcher starts the engine before the gateway's logger exists, so
 * lines wait (a few, bounded) in a global slot shared by both bundles until connectDatabase routes them.
 */
const ENGINE_LOG = Symbol.for('pgw.embeddedEngine.log');
type EngineLogSink = (msg: string, extra?: object) => void;
interface EngineLog {
  waiting: Array<[string, object | undefined]>;
  sink?: EngineLogSink;
}
const MAX_WAITING_LINES = 200;

function engineLog(): EngineLog {
  const slot = globalThis as { [ENGINE_LOG]?: EngineLog };
  return (slot[ENGINE_LOG] ??= { waiting: [] });
}

function engineLogLine(msg: string, extra?: object): void {
  const log = engineLog();
  if (log.sink) log.sink(msg, extra);
  else if (log.waiting.length < MAX_WAITING_LINES) log.waiting.push([msg, extra]);
}

/** Sends the engine's lines to `sink` from now on, the ones written before first. */
export function routeEngineLog(sink: EngineLogSink): void {
  const log = engineLog();
  log.sink = sink;
  for (const [msg, extra] of log.waiting.splice(0)) sink(msg, extra);
}

/**
 * Run from the bundle (`npm start`: dist/main.js), the worker's entry is the bundle's own
 * dist/engine-worker.js (build.mjs); from source the package finds its entry itself.
 */
function bundledWorkerUrl(): URL | undefined {
  return import.meta.url.endsWith('.js') ? new URL('./engine-worker.js', import.meta.url) : undefined;
}
