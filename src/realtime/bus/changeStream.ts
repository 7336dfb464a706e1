import type { Model, mongo } from 'mongoose';
import { isDatabaseUnavailable } from '../../db/unavailable';
import { logger } from '../../logger';

type ChangeStream<T extends mongo.Document> = mongo.ChangeStream<any, T>;

export function isChangeStreamUnsupported(err: unknown): boolean {
  const e = err as { code?: number; codeName?: string; message?: string };
  // 40573: "The $changeStream stage is only supported on replica sets"; 20: IllegalOperation.
  return e?.code === 40573 || e?.code === 20 || /only supported on replica sets|changeStream/i.test(e?.message ?? '');
}

/** The driver's own collection of a model: mongoose's would queue a watch() while disconnected. */
function driverCollectionOf(model: Model<any>): mongo.Collection<any> {
  const db = model.db.db;
  if (!db) throw new Error('event bus: the database is not connected');
  return db.collection(model.collection.collectionName);
}

/** ChangeStreamHistoryLost (286), ChangeStreamFatalError (280: "resume token was not found"), or a token the server cannot read. */
function isHistoryLost(err: unknown): boolean {
  const e = err as { code?: unknown; codeName?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  return e.code === 286 || e.code === 280 || e.codeName === 'ChangeStreamHistoryLost' || (e.code === 2 && /resume token/i.test(String(e.message)));
}

/** An error after which reopening later may work: the database away, or one the driver calls resumable. */
export function isTransient(err: unknown): boolean {
  if (isDatabaseUnavailable(err)) return true;
  const e = err as { hasErrorLabel?: (label: string) => boolean } | null;
  return typeof e?.hasErrorLabel === 'function' && e.hasErrorLabel('ResumableChangeStreamError');
}

/** The wait before each attempt to reopen a lost stream: REOPEN_FIRST_MS, doubling up to REOPEN_MAX_MS. */
const REOPEN_FIRST_MS = 250;
const REOPEN_MAX_MS = 2_000;

export interface WatchHandlers<T> {
  /** Each change (null: none yet). Must not throw; called in the stream's order. */
  handle(change: T | null): void;
  /**
   * The stream could not resume (history lost) and was opened from now: reads what the gap may have
   * held, and says what it did for the log. Runs with the new stream open and before any of its
   * changes is handled, so that nothing falls between the two.
   */
  recover(): Promise<string>;
  /** The stream cannot be opened again (not a transient error): the bus switches to polling. */
  onFatal(): void;
}

/**
 * Resolves once the server has accepted `stream` (the aggregate's answer: the driver takes its resume
 * token from it, MongoDB 4.0.7 and later and the embedded engine), not once the first getMore has
 * answered, which waits up to maxAwaitTimeMS for a change when there is none: a start and every first
 * subscriber to payment statuses would wait that long. Rejects as the aggregate does (change streams
 * not supported, the database away). `first` is the first getMore's answer, for the caller to read.
 */
async function accepted<T extends mongo.Document>(stream: ChangeStream<T>): Promise<{ first: Promise<T | null> }> {
  const first = stream.tryNext();
  let tokenSet = () => undefined as void;
  const tokened = new Promise<void>((resolve) => {
    tokenSet = resolve;
    stream.once('resumeTokenChanged', tokenSet);
  });
  try {
    await Promise.race([tokened, first]);
  } finally {
    stream.off('resumeTokenChanged', tokenSet);
  }
  return { first };
}

/**
 * One change stream that outlives database outages. The driver resumes by itself only after a
 * resumable error and only while it can select a server (DATABASE_WAIT_MS); after that the stream
 * has failed. It is then reopened here with `startAfter` the last token it delivered, after a backoff
 * and for as long as the database is away (each attempt waits its server selection), so no change is
 * lost; a change seen twice (the driver resuming around a batch) is dropped by the bus's ids. When the
 * token is no longer in the database's history, it opens from now and `recover` reads the gap. The
 * first open throws (the caller decides: not supported, or the database away).
 */
export async function watchCollection<T extends mongo.Document>(
  model: Model<any>,
  pipeline: mongo.Document[],
  handlers: WatchHandlers<T>,
): Promise<{ stop(): Promise<void> }> {
  const name = model.collection.collectionName;
  let closed = false;
  let wake: (() => void) | null = null;
  // A short server-side wait keeps start-up (the first, usually empty, getMore) quick.
  const watchOptions = { maxAwaitTimeMS: 250 };
  const open = (token: unknown) =>
    driverCollectionOf(model).watch<any, T>(pipeline, token ? { ...watchOptions, startAfter: token as mongo.ResumeToken } : watchOptions);
  let stream: ChangeStream<T> = open(undefined);
  // Opening the cursor now surfaces "not supported" here rather than later in the loop. The loop
  // reads the first getMore's answer.
  let pending: Promise<T | null> | null = (await accepted(stream)).first;

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      wake = done;
    });

  /** After `err`: reopens from the last token, or from now with the gap recovered. False: fatal. */
  const reopen = async (err: unknown): Promise<boolean> => {
    const token: unknown = stream.resumeToken ?? undefined;
    await stream.close().catch(() => undefined);
    const lostAt = Date.now();
    logger.warn({ err, collection: name }, 'event bus change stream lost (database unavailable?); reopening it from its resume token');
    // Without a token (none was ever given), as when the history is lost: from now, and the gap read.
    let fromNow = token === undefined;
    for (let attempt = 0; ; attempt++) {
      await pause(Math.min(REOPEN_FIRST_MS * 2 ** attempt, REOPEN_MAX_MS));
      if (closed) return true;
      let next: ChangeStream<T> | undefined;
      try {
        next = stream = open(fromNow ? undefined : token);
        const { first } = await accepted(next);
        const recovered = fromNow ? await handlers.recover() : undefined;
        logger.warn(
          { collection: name, afterMs: Date.now() - lostAt, attempts: attempt + 1, recovered },
          fromNow ? 'event bus change stream reopened from now; the gap was read from the database' : 'event bus change stream resumed from its resume token',
        );
        pending = first;
        return true;
      } catch (reopenErr) {
        await next?.close().catch(() => undefined);
        if (closed) return true;
        if (!fromNow && isHistoryLost(reopenErr)) {
          fromNow = true;
          attempt = -1;
          logger.warn(
            { err: reopenErr, collection: name },
            'event bus change stream cannot resume: the database no longer has that point of its history (a restarted embedded engine, or an oplog that rolled over); opening it from now and reading the gap from the database',
          );
          continue;
        }
        if (isTransient(reopenErr)) continue;
        logger.error({ err: reopenErr, collection: name }, 'event bus cannot reopen its change stream; switching to polling');
        return false;
      }
    }
  };

  const loop = (async () => {
    while (!closed) {
      try {
        const change = pending ?? stream.next();
        pending = null;
        handlers.handle(await change);
      } catch (err) {
        if (closed) return;
        if (!(await reopen(err))) {
          closed = true;
          handlers.onFatal();
          return;
        }
      }
    }
  })();

  return {
    async stop() {
      closed = true;
      wake?.();
      await stream.close().catch(() => undefined);
      await loop.catch(() => undefined);
    },
  };
}
