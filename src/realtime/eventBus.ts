import type { Model, mongo } from 'mongoose';
import { isDatabaseUnavailable } from '../db/unavailable';
import { logger } from '../logger';
import { EventModel, SequenceModel, type EventRecord } from '../domain/events/eventModel';
import { statusChangeId, type EventHooks, toStoredEvent, type StatusChange, type StoredEvent } from '../domain/events/eventHooks';
import { PaymentModel } from '../domain/payments/paymentModel';
import { STATUSES_ENTERED_WITHOUT_EVENT } from '../domain/payments/paymentStates';
import { PROCESS_ID } from '../processId';

type ChangeStream<T extends mongo.Document> = mongo.ChangeStream<any, T>;
type ChangeStreamDocument<T extends mongo.Document> = mongo.ChangeStreamDocument<T>;

/**
 * The cross-instance event bus: every stored event, whichever gateway process wrote it, reaches the
 * subscribers of every process (SSE streams, GraphQL subscriptions) within a second, once each.
 * Sources, one each per process, never one per subscriber: the events this process stores (from the
 * outbox), and the others' through a change stream on `events` (inserts by another `origin`), or, on a
 * standalone mongod, polling by `seq` (which sees this process's events again: dropped as published).
 * After an outage the stream resumes from the token of its last delivered change; when the database no
 * longer has that point (any restart of the embedded engine; a rolled-over oplog) it opens from now and
 * the gap is read from the collections once (replayEventsSince), and logged. Subscribers are indexed by
 * payment and account id, and each remembers the ids it received, so a replay never doubles an event.
 * Status changes no event announces (PENDING → PROCESSING) go on their own channel
 * (subscribeStatusChanges), watched on `payments` only while this process has status subscribers (and
 * STATUS_LINGER_MS after): a status subscriber must await statusChangesReady() before it reads the
 * payment. (see docs/decisions/0004-cross-instance-event-bus.md)
 */
export type BusEvent = StoredEvent;
export type { StatusChange };

export interface SubscriptionFilter {
  accountId: string;
  /** Only the events of this payment intent (payment.*, reference.paid, refund.succeeded). */
  paymentId?: string;
  /** Only these event types. */
  types?: readonly string[];
}

export type BusListener = (event: BusEvent) => void;

export type BusMode = 'change_stream' | 'poll';

/** A bounded set of recently seen ids (insertion order eviction). */
class RecentIds {
  private readonly ids = new Set<string>();
  constructor(private readonly capacity: number) {}
  /** Adds the id; false when it was already there. */
  add(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > this.capacity) {
      const oldest = this.ids.values().next().value;
      if (oldest !== undefined) this.ids.delete(oldest);
    }
    return true;
  }
}

interface Subscriber {
  filter: SubscriptionFilter;
  types: Set<string> | null;
  listener: BusListener;
  seen: RecentIds;
}

/* eslint-disable no-restricted-syntax -- per process until createRealtime/createGraphql (issue 59): every gateway's subscribers in one index */
const byPayment = new Map<string, Set<Subscriber>>();
const byAccount = new Map<string, Set<Subscriber>>();
let subscriberCount = 0;
/* eslint-enable no-restricted-syntax */

function addTo(index: Map<string, Set<Subscriber>>, key: string, sub: Subscriber): void {
  let set = index.get(key);
  if (!set) index.set(key, (set = new Set()));
  set.add(sub);
}

function removeFrom(index: Map<string, Set<Subscriber>>, key: string, sub: Subscriber): void {
  const set = index.get(key);
  if (!set) return;
  set.delete(sub);
  if (set.size === 0) index.delete(key);
}

/**
 * Registers `listener` for the events matching `filter`; returns the function that unsubscribes.
 * Listeners are called synchronously from the bus and must not throw or block (queue work instead).
 * Only events stored after the bus started are delivered; replaying history is the caller's job
 * (e.g. SSE reads the payment's stored events, then relies on the bus).
 */
export function subscribe(filter: SubscriptionFilter, listener: BusListener): () => void {
  const sub: Subscriber = {
    filter,
    types: filter.types && filter.types.length > 0 ? new Set(filter.types) : null,
    listener,
    // A payment's subscriber (an intent feed, which also drops the ids it has seen) needs few.
    seen: new RecentIds(filter.paymentId ? 32 : 256),
  };
  if (filter.paymentId) addTo(byPayment, filter.paymentId, sub);
  else addTo(byAccount, filter.accountId, sub);
  subscriberCount++;
  let active = true;
  return () => {
    if (!active) return;
    active = false;
    subscriberCount--;
    if (filter.paymentId) removeFrom(byPayment, filter.paymentId, sub);
    else removeFrom(byAccount, filter.accountId, sub);
  };
}

export function busStats(): { mode: BusMode | null; subscribers: number; published: number; statusStreamOpen: boolean } {
  return { mode: source?.mode ?? null, subscribers: subscriberCount, published, statusStreamOpen: source?.statusStreamOpen?.() ?? false };
}

/* eslint-disable no-restricted-syntax -- per process until createRealtime/createGraphql (issue 59): what the process published, for all its gateways */
const recentlyPublished = new RecentIds(20_000);
let published = 0;
/** The highest `seq` published, whatever the source: where a replay after a lost history starts. */
let highestSeq = 0;
/* eslint-enable no-restricted-syntax */

function deliver(sub: Subscriber, event: BusEvent): void {
  if (sub.filter.accountId !== event.accountId && sub.filter.accountId !== '*') return;
  if (sub.types && !sub.types.has(event.type)) return;
  if (!sub.seen.add(event.id)) return;
  try {
    sub.listener(event);
  } catch (err) {
    logger.error({ err, eventId: event.id }, 'event bus listener threw');
  }
}

/**
 * Hands one stored event to its subscribers (also the entry point for tests);
 * false when it had been published already.
 */
export function publish(event: BusEvent): boolean {
  if (!recentlyPublished.add(event.id)) return false;
  published++;
  if (event.seq > highestSeq) highestSeq = event.seq;
  if (event.paymentId) {
    const subs = byPayment.get(event.paymentId);
    if (subs) for (const sub of [...subs]) deliver(sub, event);
  }
  const subs = byAccount.get(event.accountId);
  if (subs) for (const sub of [...subs]) deliver(sub, event);
  return true;
}

// ---------------------------------------------------------------------------------------------------
// Status changes without an event

export type StatusChangeListener = (change: StatusChange) => void;
/* eslint-disable no-restricted-syntax -- per process until createRealtime/createGraphql (issue 59): every gateway's status subscribers on one channel */
const statusSubscribers = new Map<string, Set<StatusChangeListener>>();
const recentStatusChanges = new RecentIds(20_000);
/* eslint-enable no-restricted-syntax */

/**
 * Registers `listener` for the status changes of one payment that no event announces. Same contract as
 * `subscribe`: synchronous, must not throw or block. The change carries no account (another process's
 * update does not say it): the payment id is the key, and the one subscriber, the intent feed, delivers
 * nothing before its read of the intent has checked the caller's access to the payment.
 */
export function subscribeStatusChanges(paymentId: string, listener: StatusChangeListener): () => void {
  let set = statusSubscribers.get(paymentId);
  if (!set) statusSubscribers.set(paymentId, (set = new Set()));
  set.add(listener);
  // A failure (the database away) is the business of statusChangesReady's caller; the next demand retries.
  source?.statusDemand?.().catch(() => undefined);
  return () => {
    const current = statusSubscribers.get(paymentId);
    current?.delete(listener);
    if (current && current.size === 0) statusSubscribers.delete(paymentId);
    if (statusSubscribers.size === 0) source?.statusIdle?.();
  };
}

/**
 * Resolves once other processes' status changes reach this process's status subscribers: in change
 * stream mode the stream on `payments` opens with the first subscriber, so a subscriber awaits this
 * (after subscribing) before reading the payment's state, and no change can fall between its read and
 * the stream. Polling reads the subscribed payments' state every round: nothing to wait for.
 */
export function statusChangesReady(): Promise<void> {
  return source?.statusDemand?.() ?? Promise.resolve();
}

/** Hands one status change to the payment's status subscribers, once whatever the sources. */
export function publishStatusChange(change: StatusChange): void {
  const subs = statusSubscribers.get(change.paymentId);
  // Remembered even without subscribers: a source that repeats it later must not deliver it then.
  if (!recentStatusChanges.add(change.id) || !subs) return;
  for (const listener of [...subs]) {
    try {
      listener(change);
    } catch (err) {
      logger.error({ err, paymentId: change.paymentId }, 'status change listener threw');
    }
  }
}

interface PaymentStatusUpdate {
  documentKey?: { _id: string };
  updateDescription?: { updatedFields?: { status?: string; updated_at?: Date } };
}

/** A change stream document of `payments` (see the pipeline below) as a status change. */
function statusChangeOf(change: PaymentStatusUpdate): StatusChange | null {
  const paymentId = change.documentKey?._id;
  const fields = change.updateDescription?.updatedFields;
  if (!paymentId || !fields?.status || !fields.updated_at) return null;
  return { id: statusChangeId(paymentId, fields.status, fields.updated_at), paymentId, status: fields.status, intent: null };
}

/**
 * The poll fallback, and the catch-up after the stream on `payments` lost its history: the payments
 * this process has status subscribers for, as they are stored now. Returns how many it read.
 */
async function pollStatusChanges(): Promise<number> {
  const ids = [...statusSubscribers.keys()];
  for (let i = 0; i < ids.length; i += 500) {
    const docs = await PaymentModel.find(
      { _id: { $in: ids.slice(i, i + 500) }, status: { $in: STATUSES_ENTERED_WITHOUT_EVENT } },
      { status: 1, updated_at: 1 },
    ).lean<Array<{ _id: string; status: string; updated_at: Date }>>();
    for (const d of docs) publishStatusChange({ id: statusChangeId(d._id, d.status, d.updated_at), paymentId: d._id, status: d.status, intent: null });
  }
  return ids.length;
}

// ---------------------------------------------------------------------------------------------------
// Sources

interface Source {
  mode: BusMode;
  stop(): Promise<void>;
  /** Change streams: opens the stream on `payments` if status subscribers exist; resolves once it watches. */
  statusDemand?(): Promise<void>;
  /** Change streams: the last status subscriber left. */
  statusIdle?(): void;
  statusStreamOpen?(): boolean;
}

// eslint-disable-next-line no-restricted-syntax -- one change stream or poller a process, shared by its gateways like the database (docs/decisions/0004)
let source: Source | null = null;

function isChangeStreamUnsupported(err: unknown): boolean {
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
function isTransient(err: unknown): boolean {
  if (isDatabaseUnavailable(err)) return true;
  const e = err as { hasErrorLabel?: (label: string) => boolean } | null;
  return typeof e?.hasErrorLabel === 'function' && e.hasErrorLabel('ResumableChangeStreamError');
}

/** The wait before each attempt to reopen a lost stream: REOPEN_FIRST_MS, doubling up to REOPEN_MAX_MS. */
const REOPEN_FIRST_MS = 250;
const REOPEN_MAX_MS = 2_000;

interface WatchHandlers<T> {
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
async function watchCollection<T extends mongo.Document>(
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

/**
 * A stream opened on demand: `demand` opens it (or keeps it open) and resolves once it watches; `idle`
 * closes it `lingerMs` later unless it is demanded again meanwhile. `open` reports its own fatal
 * failures (resolving null); when it rejects (the database away) the demand rejects, and the next
 * demand tries again.
 */
function onDemand(open: () => Promise<{ stop(): Promise<void> } | null>, lingerMs: number) {
  let opened: Promise<{ stop(): Promise<void> } | null> | null = null;
  let closing: Promise<unknown> = Promise.resolve();
  let lingering: NodeJS.Timeout | null = null;
  let stopped = false;
  const stopLingering = () => {
    if (lingering) clearTimeout(lingering);
    lingering = null;
  };
  const close = () => {
    const o = opened;
    opened = null;
    closing = Promise.all([closing, o?.then((s) => s?.stop(), () => undefined)]);
    return closing;
  };
  return {
    demand(): Promise<void> {
      stopLingering();
      if (stopped) return Promise.resolve();
      // After a close, the new stream opens once the old one has let go.
      const attempt = (opened ??= closing.then(open));
      return attempt.then(
        () => undefined,
        (err: unknown) => {
          if (opened === attempt) opened = null;
          throw err;
        },
      );
    },
    idle(): void {
      if (!opened || lingering || stopped) return;
      lingering = setTimeout(() => {
        lingering = null;
        void close();
      }, lingerMs);
      lingering.unref();
    },
    isOpen: () => opened !== null,
    async stop(): Promise<void> {
      stopped = true;
      stopLingering();
      await close();
    },
  };
}

/** How long the stream on `payments` stays open after the last status subscriber leaves. */
const STATUS_LINGER_MS = 30_000;

/**
 * The change streams: other processes' events (inserts into `events` by another `origin`; this
 * process's own reach its subscribers straight from the outbox, see startEventBus), and, while this
 * process has status subscribers, the payments' updates that enter a status without an event (the
 * server filters them; only the fields that identify the change travel). Those updates include this
 * process's own, already announced: dropped by id.
 */
async function startChangeStream(onFatal: (fromSeq: number) => void, statusLingerMs: number): Promise<Source> {
  // The events counter now: a replay never reaches below it (events stored before the bus started are not its).
  const startSeq = (await SequenceModel.findById('events').lean())?.value ?? 0;
  const replayFloor = () => Math.max(startSeq, highestSeq - REPLAY_MARGIN);
  let failed = false;
  const streams: Array<{ stop(): Promise<void> }> = [];
  // operationType first: the embedded engine then skips other operations before building their documents.
  const paymentsPipeline = [
    { $match: { operationType: 'update', 'updateDescription.updatedFields.status': { $in: STATUSES_ENTERED_WITHOUT_EVENT } } },
    { $project: { documentKey: 1, 'updateDescription.updatedFields.status': 1, 'updateDescription.updatedFields.updated_at': 1 } },
  ];
  const statusStream = onDemand(async () => {
    try {
      return await watchCollection<PaymentStatusUpdate>(PaymentModel, paymentsPipeline, {
        handle: (change) => {
          const sc = change && statusChangeOf(change);
          if (sc) publishStatusChange(sc);
        },
        // A status without an event entered and left again during the gap is not seen: only the
        // current one matters to a feed, and any later one comes with an event.
        recover: async () => `read the current status of the ${await pollStatusChanges()} payments followed here`,
        onFatal: fail,
      });
    } catch (err) {
      // The database away: the subscriber's own reads fail too (503), and the next demand tries again.
      if (isTransient(err)) throw err;
      // Polling takes over, and it reads the subscribed payments' state: nothing is missed.
      logger.error({ err }, 'event bus cannot open its change stream on payments; switching to polling');
      fail();
      return null;
    }
  }, statusLingerMs);
  function fail(): void {
    if (failed) return;
    failed = true;
    for (const s of streams) void s.stop();
    void statusStream.stop();
    onFatal(replayFloor());
  }
  const eventsPipeline = [{ $match: { operationType: 'insert', 'fullDocument.origin': { $ne: PROCESS_ID } } }];
  streams.push(
    await watchCollection<ChangeStreamDocument<EventRecord>>(EventModel, eventsPipeline, {
      handle: (change) => {
        if (!change || change.operationType !== 'insert' || !change.fullDocument) return;
        publish(toStoredEvent(change.fullDocument));
      },
      recover: async () => {
        const floor = replayFloor();
        const { read, replayed } = await replayEventsSince(floor);
        return `replayed ${replayed} of the ${read} events of other processes stored after seq ${floor}; one stored in the gap with a lower seq would be missed`;
      },
      onFatal: fail,
    }),
  );
  const demand = () => (statusSubscribers.size > 0 && !failed ? statusStream.demand() : Promise.resolve());
  // Subscribers from before the start (none in a gateway: the bus starts first).
  demand().catch(() => undefined);
  return {
    mode: 'change_stream',
    statusDemand: demand,
    statusIdle: () => {
      if (statusSubscribers.size === 0) statusStream.idle();
    },
    statusStreamOpen: () => statusStream.isOpen(),
    async stop() {
      await Promise.all([...streams.map((s) => s.stop()), statusStream.stop()]);
    },
  };
}

/**
 * How far below the highest `seq` published a replay starts. A seq is allocated before its event is
 * stored (from an outbox, moments later), so an event can be stored after others with higher numbers;
 * the margin covers those in flight when the database went away. Everything the replay reads again
 * within it was published already and is dropped by id (recentlyPublished holds far more).
 */
const REPLAY_MARGIN = 2_000;
const REPLAY_PAGE = 1_000;

/** The `events.seq` index that polling and replays read by; building it is idempotent. */
function ensureSeqIndex(): Promise<unknown> {
  return EventModel.collection.createIndex({ seq: 1 }).catch((err: unknown) => logger.warn({ err }, 'could not create events.seq index'));
}

/**
 * The other processes' events stored with a seq above `floor`, published in seq order (each one not
 * published already reaches the subscribers): what a change stream that lost its history missed.
 */
async function replayEventsSince(floor: number): Promise<{ read: number; replayed: number }> {
  await ensureSeqIndex();
  let after = floor;
  let read = 0;
  let replayed = 0;
  for (;;) {
    const docs = await EventModel.find({ seq: { $gt: after }, origin: { $ne: PROCESS_ID } }).sort({ seq: 1 }).limit(REPLAY_PAGE).lean();
    for (const doc of docs) if (publish(toStoredEvent(doc))) replayed++;
    read += docs.length;
    if (docs.length < REPLAY_PAGE) return { read, replayed };
    after = docs[docs.length - 1]!.seq;
  }
}

/**
 * Polling by `seq`. Sequence numbers are allocated before the write that stores an event, so a
 * lower number can become visible after a higher one. The poller keeps a frontier (every seq at or
 * below it has been handled) and the ids seen above it; a hole in the sequence is waited for up to
 * GAP_WAIT_MS (a number that was allocated but never stored is then skipped).
 */
const GAP_WAIT_MS = 5_000;

async function startPolling(pollMs: number, startAfterSeq?: number): Promise<Source> {
  // The poll's query needs an index on seq.
  await ensureSeqIndex();
  let frontier = startAfterSeq ?? (await SequenceModel.findById('events').lean())?.value ?? 0;
  const seenAbove = new Set<number>();
  const gapSince = new Map<number, number>();
  let closed = false;
  let running: Promise<void> | null = null;

  const pollOnce = async () => {
    if (statusSubscribers.size > 0) await pollStatusChanges();
    const docs = await EventModel.find({ seq: { $gt: frontier } }).sort({ seq: 1 }).limit(2_000).lean();
    for (const doc of docs) {
      if (seenAbove.has(doc.seq)) continue;
      seenAbove.add(doc.seq);
      publish(toStoredEvent(doc));
    }
    // Advance the frontier over contiguous seen numbers, and over holes that waited long enough
    // (an in-process wait: on the monotonic clock).
    const now = performance.now();
    for (;;) {
      const next = frontier + 1;
      if (seenAbove.delete(next)) {
        gapSince.delete(next);
        frontier = next;
        continue;
      }
      if (seenAbove.size === 0) break;
      const since = gapSince.get(next);
      if (since === undefined) {
        gapSince.set(next, now);
        break;
      }
      if (now - since < GAP_WAIT_MS) break;
      gapSince.delete(next);
      frontier = next;
    }
  };

  // While the database is away every poll fails: said once when it starts failing and once when it works again.
  let failingSince = 0;
  const timer = setInterval(() => {
    if (running || closed) return;
    running = pollOnce()
      .then(
        () => {
          if (failingSince) logger.warn({ afterMs: Date.now() - failingSince }, 'event bus polling again');
          failingSince = 0;
        },
        (err: unknown) => {
          if (!failingSince) logger.warn({ err }, 'event bus poll failed; retrying every poll');
          failingSince ||= Date.now();
        },
      )
      .finally(() => {
        running = null;
      });
  }, pollMs);
  timer.unref();
  return {
    mode: 'poll',
    async stop() {
      closed = true;
      clearInterval(timer);
      if (running) await running;
    },
  };
}

export interface EventBusOptions {
  /** Default: change stream when supported, else polling. */
  mode?: 'auto' | BusMode;
  pollMs?: number;
  /** How long the stream on `payments` stays open after the last status subscriber leaves (STATUS_LINGER_MS). */
  statusLingerMs?: number;
}

/**
 * The gateways of this process the bus hears at once (their own events and status changes), each with
 * what stops hearing it. The bus itself (one change stream or poller on the database) is the process's,
 * shared like the database: each gateway started in the process adds its feed, and the source stops
 * when the last gateway using it stops.
 */
// eslint-disable-next-line no-restricted-syntax -- the gateways' feeds into the process's one source, which stops with the last
const feeds = new Map<EventHooks, () => void>();

/** `hooks`: the starting gateway's, whose own events the bus hands its subscribers at once. */
export async function startEventBus(opts: EventBusOptions & { hooks: EventHooks }): Promise<BusMode> {
  const { hooks } = opts;
  if (!feeds.has(hooks)) {
    const stopEvents = hooks.onEventInsertedHere(publish);
    const stopStatusChanges = hooks.onStatusChangedHere(publishStatusChange);
    feeds.set(hooks, () => {
      stopEvents();
      stopStatusChanges();
    });
  }
  if (source) return source.mode;
  const mode = opts.mode ?? 'auto';
  const pollMs = opts.pollMs ?? 100;
  if (mode !== 'poll') {
    try {
      source = await startChangeStream((fromSeq) => {
        void startPolling(pollMs, fromSeq).then((s) => {
          source = s;
        });
      }, opts.statusLingerMs ?? STATUS_LINGER_MS);
      logger.info('event bus: MongoDB change stream on events');
      return source.mode;
    } catch (err) {
      if (mode === 'change_stream' || !isChangeStreamUnsupported(err)) throw err;
      logger.info('event bus: change streams not supported by this MongoDB (standalone?); polling events by seq');
    }
  }
  source = await startPolling(pollMs);
  return source.mode;
}

/**
 * `hooks`: the stopping gateway's feed ends, and the source too once no gateway's is left. Without it
 * (tests that restart the bus in another mode) every feed and the source stop.
 */
export async function stopEventBus(opts: { hooks?: EventHooks } = {}): Promise<void> {
  if (opts.hooks) {
    feeds.get(opts.hooks)?.();
    feeds.delete(opts.hooks);
    if (feeds.size > 0) return;
  }
  for (const stop of feeds.values()) stop();
  feeds.clear();
  const s = source;
  source = null;
  if (s) await s.stop();
}
