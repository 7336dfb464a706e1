import { setFlagsFromString } from 'node:v8';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import type { EmbeddedMongo, EmbeddedMongoOptions } from './index';
import { SocketListenError } from './socketListenError';
import type { WorkerReply, WorkerRequest } from './workerProtocol';

export { SocketListenError };

export interface ThreadedEmbeddedMongoOptions extends EmbeddedMongoOptions {
  /**
   * The worker's entry. Default: `../bin/engine-worker.mjs` next to this file, which registers tsx and
   * runs `workerMain.ts`. A bundle passes its own compiled entry (the gateway's `dist/engine-worker.js`).
   */
  workerUrl?: URL;
}

/**
 * The engine in a worker thread of this process: the same engine, socket and files as
 * `startEmbeddedMongo`, but its work (command handling, indexes, journal encoding) and its heap (every
 * stored document) are off the caller's thread. A gateway on a multi-core machine then uses a second core
 * for the database, and its own garbage collector never walks the stored data. A SIGKILL still takes
 * both down together: durability is the journal's, exactly as in-process.
 */
export async function startEmbeddedMongoInWorker(options: ThreadedEmbeddedMongoOptions = {}): Promise<EmbeddedMongo> {
  const { logger, workerUrl, ...rest } = options;
  const worker = withFlagWhileCreated('initial-old-space-size', ENGINE_INITIAL_OLD_GENERATION_MB, () =>
    workerWithoutCallerSemiSpace(workerUrl ?? new URL('../bin/engine-worker.mjs', import.meta.url), {
      workerData: { options: { ...rest, forwardLogs: Boolean(logger) } },
      // The worker's own loaders (tsx, through the entry) must not be doubled by the parent's --import flags.
      execArgv: [],
      resourceLimits: { maxYoungGenerationSizeMb: ENGINE_YOUNG_GENERATION_MB },
    }),
  );
  let closed: (() => void) | undefined;
  const ready = new Promise<Extract<WorkerReply, { type: 'ready' }>>((resolve, reject) => {
    worker.on('message', (m: WorkerReply) => {
      if (m.type === 'log') logger?.(m.msg, m.extra);
      else if (m.type === 'ready') resolve(m);
      else if (m.type === 'closed') closed?.();
      else if (m.type === 'startFailed') reject(startError(m));
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`embedded db worker exited (code ${code}) before it was ready`)));
  });
  let info: Extract<WorkerReply, { type: 'ready' }>;
  try {
    info = await ready;
  } catch (err) {
    await worker.terminate();
    throw err;
  }
  // From now on the engine dying is the database gone: fail loudly in the caller's thread, as an
  // exception thrown by the in-process engine would.
  const onCrash = (err: Error) => {
    setImmediate(() => {
      throw err;
    });
  };
  worker.on('error', onCrash);
  let closing: Promise<void> | undefined;
  return {
    uri: info.uri,
    port: info.port,
    socketPath: info.socketPath,
    socketUri: info.socketUri,
    close() {
      closing ??= new Promise<void>((resolve) => {
        worker.off('error', onCrash);
        worker.once('exit', () => resolve());
        closed = () => void worker.terminate();
        worker.postMessage({ type: 'close' } satisfies WorkerRequest);
      });
      return closing;
    },
  };
}

/**
 * The engine's young generation (V8 sizes it as 3 semi-spaces: 16 MiB each here, V8's default on 64-bit).
 * The engine's garbage is per command and dies within it; a larger young generation only adds resident
 * memory (each semi-space grows to its maximum under a burst of writes and stays there), measured with
 * bench/profile/gatewayMemory.mts.
 */
const ENGINE_YOUNG_GENERATION_MB = 48;

/**
 * The size the engine's old generation may reach before its first full collection. Under a steady write
 * load the engine promotes garbage (commands and documents that waited on a busy thread past two
 * scavenges) while holding little live data, so with the gateway's --heap-growing-percent=50 its old
 * generation was fully collected more than once a second, each marked by V8's helper threads on the same
 * cores. The floor spaces those collections out; it costs resident memory only until the engine's live
 * data is larger than it. Only the engine's isolate (figures: bench/HISTORY.md, "Round 7").
 */
const ENGINE_INITIAL_OLD_GENERATION_MB = 128;

/**
 * Runs `create` (which creates a worker) with the V8 flag `--<name>=<mb>`, and sets the caller's value
 * back once the worker is online: V8 flags are process-wide, and this one is read when the worker's
 * isolate is created on its thread.
 */
function withFlagWhileCreated(name: string, mb: number, create: () => Worker): Worker {
  setFlagsFromString(`--${name}=${mb}`);
  const worker = create();
  worker.once('online', () => setFlagsFromString(`--${name}=${callerFlagMb(name)}`));
  return worker;
}

/**
 * A worker whose isolate does not take the caller's --max-semi-space-size. That V8 flag is process-wide
 * and overrides resourceLimits, so it is unset while the worker's isolate is created (on its thread,
 * before 'online') and set back after: the gateway's `npm start` asks for 64 MiB semi-spaces for its own
 * request garbage, which a worker would otherwise copy (a 128 MiB young generation, resident once a burst
 * of work has filled it). Exported for the gateway's other worker (its background thread).
 */
export function workerWithoutCallerSemiSpace(url: URL, options: WorkerOptions): Worker {
  return withFlagWhileCreated('max-semi-space-size', 0, () => new Worker(url, options));
}

/** The caller's `--<name>=<MiB>` V8 flag (node flags or NODE_OPTIONS; the last one wins, as in V8), 0 when unset. */
function callerFlagMb(name: string): number {
  const flags = [...(process.env.NODE_OPTIONS ?? '').split(/\s+/), ...process.execArgv];
  const re = new RegExp(`^--${name.split('-').join('[-_]')}=(\\d+)$`);
  let mb = 0;
  for (const f of flags) {
    const m = re.exec(f);
    if (m) mb = Number(m[1]);
  }
  return mb;
}

/** The start-up error the worker reported, as the in-process engine would have thrown it. */
function startError(m: Extract<WorkerReply, { type: 'startFailed' }>): Error {
  if (!m.socketListen) return new Error(m.message);
  const { socketPath, cause, code } = m.socketListen;
  return new SocketListenError(socketPath, Object.assign(new Error(cause), { code }));
}
