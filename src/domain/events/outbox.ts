import type { Model } from 'mongoose';
import { newId } from '../../ids';
import { nowForAccount } from '../clock/accountTime';
import { logger } from '../../logger';
import { dedupeTimerId, dueTimelineBase, insertTimer, type GatewayTimers, type TimerSpec as PlatformTimerSpec } from '../../platform/timers/timerService';
import { EventModel, type EventRecord, type PendingEvent, type PendingTimer } from './eventModel';
import { insertBatched, updateOneBatched } from '../../db/batching';
import { HOOK_LEASE_MS, toStoredEvent, type EventHooks, type StoredEvent } from './eventHooks';
import { PROCESS_ID } from '../../processId';
import { nextSequence } from './sequence';
import { currentTraceParent } from '../../tracing/tracing';
import { isDuplicateKey } from '../../db/errors';
import type { Acknowledge } from '../../db/writeConcern';

/**
 * The single-document outbox: a state change pushes its events (and timers) into the document's
 * `pending_events` (`pending_timers`) in the same atomic update; this dispatcher copies them to `events`
 * under their own `_id` (twice is harmless), pulls them and runs the hooks, after the write and on a sweep,
 * so a crash loses nothing. How to make a collection an outbox: the notes. More:
 * docs/decisions/notes/events-and-payments.md, "The single-document outbox".
 */
export interface EventSink {
  hooks: EventHooks;
  timers: GatewayTimers;
}

export interface EventSpec {
  type: string;
  /** The object as it is at this moment (a serialized resource). */
  data: object;
  /** The payment intent the event concerns, when there is one. */
  paymentId?: string | null;
  /** Its place among the events of its object (`data.id`); 1 (the default) for an object's only event. */
  sequence?: number;
}

type OutboxModel = Model<any>;

/**
 * Builds events with ids and consecutive order numbers, ready to be pushed into an outbox.
 * `firstSeq`: `specs.length` numbers the caller already reserved with nextSequence('events', n).
 */
export async function buildEvents(accountId: string, specs: EventSpec[], createdAt: Date, firstSeq?: number): Promise<PendingEvent[]> {
  if (specs.length === 0) return [];
  const first = firstSeq ?? (await nextSequence('events', specs.length));
  const queuedAt = Date.now();
  const traceParent = currentTraceParent();
  return specs.map((s, i) => ({
    ...(traceParent && { trace_parent: traceParent }),
    _id: newId('evt'),
    account_id: accountId,
    type: s.type,
    data_json: JSON.stringify(s.data),
    created_at: createdAt,
    seq: first + i,
    sequence: s.sequence ?? 1,
    payment_id: s.paymentId ?? null,
    queued_at: queuedAt,
  }));
}

/** The platform's TimerSpec with its dedupe key required: it makes scheduling idempotent, which the dispatcher relies on. */
export type TimerSpec = PlatformTimerSpec & { dedupeKey: string };

export function buildTimers(specs: TimerSpec[]): PendingTimer[] {
  const queuedAt = Date.now();
  // Taken here, where the due times were just computed (in a timer handler: on its due time's clock),
  // not when they are inserted, after the write, from a queue that may run in another's context.
  const dueBase = dueTimelineBase();
  const traceParent = currentTraceParent();
  return specs.map((t) => ({
    ...(traceParent && { trace_parent: traceParent }),
    _id: dedupeTimerId(t.accountId, t.kind, t.dedupeKey),
    account_id: t.accountId,
    kind: t.kind,
    ref_id: t.refId,
    due_at: t.dueAt,
    payload: t.payload ?? {},
    dedupe_key: t.dedupeKey,
    queued_at: queuedAt,
    due_base: dueBase,
  }));
}

/**
 * Inserts the event with its hooks already claimed by this process (the lease the hook runner would
 * otherwise take with a separate findOneAndUpdate). `claimedUntil` is null when the event was there
 * already: whoever stored it runs its hooks, or the sweeper does.
 */
async function storeEvent(e: PendingEvent, event: StoredEvent, ack: Acknowledge, leaseOwner: string): Promise<{ event: StoredEvent; claimedUntil: number | null }> {
  const storedAt = Date.now();
  const claimedUntil = storedAt + HOOK_LEASE_MS;
  let inserted = true;
  try {
    await insertBatched(
      EventModel,
      {
        _id: e._id,
        account_id: e.account_id,
        type: e.type,
        data_json: e.data_json,
        created_at: new Date(e.created_at),
        seq: e.seq,
        sequence: e.sequence,
        payment_id: e.payment_id,
        livemode: false,
        hooks_done: false,
        hooks_lease_until: claimedUntil,
        hooks_lease_owner: leaseOwner,
        hook_attempts: 1,
        hooks_failed: false,
        stored_at: storedAt,
        origin: PROCESS_ID,
        ...(e.trace_parent && { trace_parent: e.trace_parent }),
      },
      ack,
    );
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    inserted = false;
  }
  return { event, claimedUntil: inserted ? claimedUntil : null };
}

/** The event a pending one becomes; `known`: its data as an object (otherwise parsed from `data_json` on first use). */
function storedEventOf(e: PendingEvent, known: Record<string, unknown> | undefined): StoredEvent {
  return toStoredEvent({ ...e, data: known, data_json: known ? undefined : e.data_json, livemode: false });
}

/**
 * An event just stored: announced in this process, then its hooks queued. Announced also when it was
 * found stored already: that may be this process's own earlier insert whose answer was lost (the
 * database went away between applying it and replying), which nothing else would ever announce here,
 * since the bus's change stream leaves out this process's events. Listeners drop an id seen before.
 */
function afterStore(s: { event: StoredEvent; claimedUntil: number | null }, hooks: EventHooks): void {
  hooks.announceInserted(s.event);
  void hooks.enqueueHooks(s.event, { claimedUntil: s.claimedUntil });
}

/**
 * Moves the pending events of one outbox document into `events`, in order, queues their hooks, and
 * schedules its pending timers. Returns the events moved (empty when another dispatcher got there first).
 */
export async function dispatchOutbox(sink: EventSink, model: OutboxModel, docId: string): Promise<StoredEvent[]> {
  // The raw collection: outbox fields need not be declared in the model's schema (strict mode would
  // drop them from filters and updates).
  const doc = (await model.collection.findOne({ _id: docId as never }, { projection: { pending_events: 1, pending_timers: 1 } })) as {
    pending_events?: PendingEvent[];
    pending_timers?: PendingTimer[];
  } | null;
  const moved = await moveOutbox(sink, model, docId, doc?.pending_events ?? [], doc?.pending_timers ?? []);
  await moved.cleared;
  return moved.events;
}

/**
 * dispatchOutbox for a document whose outbox this process knows without reading it back: one it has
 * just inserted with these pending events and timers, or one it has just changed with a write
 * conditional on the version it read (the outbox it read, plus what the write pushed). Anything pushed
 * after that write is someone else's change, which dispatches its own outbox (ours included, if still
 * there: storing twice is harmless). So the read is skipped.
 * `eventData`: the events' data as objects, in the order of `events` (undefined: parsed from `data_json`).
 */
export async function dispatchKnown(
  sink: EventSink,
  model: OutboxModel,
  docId: string,
  events: PendingEvent[],
  timers: PendingTimer[],
  opts: { accountOffsetMs?: number; eventData?: Array<Record<string, unknown> | undefined> } = {},
): Promise<StoredEvent[]> {
  const moved = await storeKnown(sink, model, docId, events, timers, opts);
  await moved.cleared;
  return moved.events;
}

/**
 * dispatchKnown, answered as soon as the events and timers are stored (their hooks queued): `cleared`
 * is the outbox's clearing (and the timers' clock checks), still in flight, for a caller that has
 * another write to send meanwhile. The caller awaits it, or hands it to what does; a clearing that
 * never lands is left for the sweeper, as after a crash.
 */
export function storeKnown(
  sink: EventSink,
  model: OutboxModel,
  docId: string,
  events: PendingEvent[],
  timers: PendingTimer[],
  opts: { accountOffsetMs?: number; eventData?: Array<Record<string, unknown> | undefined> } = {},
): Promise<{ events: StoredEvent[]; cleared: Promise<unknown> }> {
  return moveOutbox(sink, model, docId, events, timers, opts.accountOffsetMs, opts.eventData);
}

async function moveOutbox(
  { hooks, timers: gatewayTimers }: EventSink,
  model: OutboxModel,
  docId: string,
  pendingEvents: PendingEvent[],
  timers: PendingTimer[],
  accountOffsetMs?: number,
  /** The events' data as objects, in the order of `pendingEvents` (saves parsing `data_json` back). */
  eventData: Array<Record<string, unknown> | undefined> = [],
): Promise<{ events: StoredEvent[]; cleared: Promise<unknown> }> {
  const known = new Map<string, Record<string, unknown>>();
  pendingEvents.forEach((e, i) => {
    const data = eventData[i];
    if (data) known.set(e._id, data);
  });
  const pending = [...pendingEvents].sort((a, b) => a.seq - b.seq);
  if (pending.length === 0 && timers.length === 0) return { events: [], cleared: Promise.resolve() };
  const settling: Array<Promise<void>> = [];
  const scheduleTimers = async () => {
    for (const t of timers) {
      const inserted = await insertTimer({
        accountId: t.account_id,
        kind: t.kind,
        refId: t.ref_id,
        dueAt: new Date(t.due_at),
        payload: t.payload,
        dedupeKey: t.dedupe_key,
        offsetMs: accountOffsetMs,
        dueBase: t.due_base ?? t.clock_base ?? undefined,
        traceParent: t.trace_parent,
        timers: gatewayTimers,
        // Acknowledged once applied: the timer is in its outbox document, durably, until the outbox is
        // cleared after it (as for the events below); lost with a crash, it is scheduled again from there.
        acknowledge: 'applied',
      });
      settling.push(inserted.settled);
    }
  };
  const storeEvents = async () => {
    const out: Array<{ event: StoredEvent; claimedUntil: number | null }> = [];
    // Acknowledged once applied: each event is in its outbox document, durably, until the outbox is
    // cleared, which comes after these inserts in the journal (or oplog). An event lost with a crash is
    // stored again from there, with the same id and content. In order: one after the other.
    for (const e of pending) out.push(await storeEvent(e, storedEventOf(e, known.get(e._id)), 'applied', hooks.leaseOwner));
    return out;
  };
  // Timers and events are independent of each other (events stay in order among themselves); the
  // outbox is cleared only once both are stored.
  const [timersDone, eventsDone] = await Promise.allSettled([scheduleTimers(), storeEvents()]);
  if (eventsDone.status === 'rejected') throw eventsDone.reason;
  const stored = eventsDone.value;
  // Stored events get their hooks now, whatever happened to the timers.
  for (const s of stored) afterStore(s, hooks);
  // A timer failed: the outbox stays as it is for the sweeper.
  if (timersDone.status === 'rejected') throw timersDone.reason;
  const pull: Record<string, unknown> = {};
  if (pending.length > 0) pull.pending_events = { _id: { $in: pending.map((e) => e._id) } };
  if (timers.length > 0) pull.pending_timers = { _id: { $in: timers.map((t) => t._id) } };
  // The outbox is cleared while the timers' clock check runs.
  // Acknowledged once applied: an outbox clearing lost with a crash is dispatched again (storing is idempotent).
  const cleared = Promise.all([updateOneBatched(model, { _id: docId }, { $pull: pull }, 'applied'), ...settling]);
  return { events: stored.map((s) => s.event), cleared };
}

/** Stores an event that is not part of a state change (test.ping, checkout.session.completed). */
export async function emitAccountEvent(
  { hooks }: EventSink,
  accountId: string,
  type: string,
  data: object,
  opts: { now?: Date; paymentId?: string | null } = {},
): Promise<StoredEvent> {
  const createdAt = opts.now ?? (await nowForAccount(accountId));
  const [built] = await buildEvents(accountId, [{ type, data, paymentId: opts.paymentId ?? null }], createdAt);
  // No outbox holds it: acknowledged once durable.
  const stored = await storeEvent(built!, storedEventOf(built!, undefined), 'durable', hooks.leaseOwner);
  afterStore(stored, hooks);
  return stored.event;
}

/**
 * The driver's collection, below mongoose: the sweeper's periodic look-ups are housekeeping and stay
 * out of mongoose's query debug log (tests count the queries a request makes).
 */
function driverCollection(model: OutboxModel) {
  const db = model.db.db;
  if (!db) throw new Error('database not connected');
  return db.collection(model.collection.collectionName);
}

const SWEEP_MIN_AGE_MS = 2_000;
const HOOK_SWEEP_MIN_AGE_MS = 5_000;
const SWEEP_BATCH = 100;

/**
 * One gateway's outboxes and their sweeper: each module registers its collection on the Outboxes its
 * gateway built (src/server.ts), and the sweeper runs that gateway's hooks for what it finds.
 */
export interface Outboxes {
  register(model: OutboxModel): void;
  /** One pass of the sweeper: outboxes left behind by a crash, then events whose hooks have not finished. */
  sweep(): Promise<{ outboxDocs: number; hookEvents: number }>;
  startSweeper(intervalMs?: number): void;
  stopSweeper(): Promise<void>;
}

export function createOutboxes(sink: EventSink): Outboxes {
  const { hooks } = sink;
  const outboxes = new Map<string, OutboxModel>();
  let sweepTimer: NodeJS.Timeout | null = null;
  let sweeping: Promise<unknown> | null = null;

  /** One pass; `hooksRun` settles once the hooks it queued have run. */
  async function sweepOnce(): Promise<{ outboxDocs: number; hookEvents: number; hooksRun: Promise<unknown> }> {
    const now = Date.now();
    let outboxDocs = 0;
    for (const model of outboxes.values()) {
      const old = { $lte: now - SWEEP_MIN_AGE_MS };
      // Two indexed range queries rather than one $or, which an engine may answer with a full scan.
      const find = (field: string) =>
        driverCollection(model).find({ [field]: old }, { projection: { _id: 1 } }).limit(SWEEP_BATCH).toArray() as unknown as Promise<Array<{ _id: string }>>;
      const found = [...(await find('pending_events.queued_at')), ...(await find('pending_timers.queued_at'))];
      const docs = [...new Map(found.map((d) => [d._id, d])).values()];
      for (const d of docs) {
        await dispatchOutbox(sink, model, d._id);
        outboxDocs++;
      }
    }
    const events = (await driverCollection(EventModel)
      .find(
        { hooks_done: false, stored_at: { $lte: now - HOOK_SWEEP_MIN_AGE_MS }, hooks_lease_until: { $lte: now } },
        { projection: { _id: 1, account_id: 1, type: 1, data: 1, data_json: 1, created_at: 1, seq: 1, sequence: 1, payment_id: 1, livemode: 1, trace_parent: 1 } },
      )
      .sort({ seq: 1 })
      .limit(SWEEP_BATCH)
      .toArray()) as unknown as EventRecord[];
    const hooksRun = Promise.all(events.map((e) => hooks.enqueueHooks(toStoredEvent(e))));
    return { outboxDocs, hookEvents: events.length, hooksRun };
  }

  async function sweep(): Promise<{ outboxDocs: number; hookEvents: number }> {
    const { outboxDocs, hookEvents } = await sweepOnce();
    return { outboxDocs, hookEvents };
  }

  /**
   * Passes one after another while one finds a whole batch, then the next tick: a process that finds a
   * predecessor's work (its leases handed back at its stop, or lapsed) takes it all at once, not a batch a
   * second. The next pass waits for the hooks this one queued, which take their events' leases: before
   * that it would find the same events again.
   */
  async function sweepWhileFull(): Promise<void> {
    for (;;) {
      const pass = await sweepOnce();
      if ((pass.hookEvents < SWEEP_BATCH && pass.outboxDocs < SWEEP_BATCH) || !sweepTimer) return;
      await pass.hooksRun;
    }
  }

  return {
    register(model) {
      outboxes.set(model.collection.collectionName, model);
    },
    sweep,
    startSweeper(intervalMs = 1_000) {
      if (sweepTimer) return;
      sweepTimer = setInterval(() => {
        if (sweeping) return;
        sweeping = sweepWhileFull()
          .catch((err) => logger.error({ err }, 'outbox sweep failed'))
          .finally(() => {
            sweeping = null;
          });
      }, intervalMs);
      sweepTimer.unref();
    },
    async stopSweeper() {
      if (sweepTimer) clearInterval(sweepTimer);
      sweepTimer = null;
      if (sweeping) await sweeping;
    },
  };
}
