import type { Model } from 'mongoose';
import { newId } from '../../ids';
import { nowForAccount } from '../clock/clock';
import { logger } from '../../logger';
import { EventModel, type PendingEvent } from './event.model';
import { enqueueHooks, toStoredEvent, type StoredEvent } from './event.hooks';
import { isDuplicateKey, nextSequence } from './sequence';

/**
 * The single-document outbox. A state change and the events it emits are one atomic update: the
 * document's conditional update also pushes the events into its `pending_events` array. This dispatcher
 * then copies them into `events` (insert with the event's own `_id`, so doing it twice is harmless),
 * pulls them from the document, and hands them to the `onEventStored` hooks. It runs right after the
 * write and on a periodic sweep, so a crash between the write and the dispatch loses nothing.
 *
 * Any collection can be an outbox (checkout sessions, say): give its documents a `pending_events`
 * array, push events built by `buildEvents` in the same update as the state change, call
 * `registerOutbox` once at start and `dispatchOutbox` after the write.
 */
export interface EventSpec {
  type: string;
  /** The object as it is at this moment (a serialized resource). */
  data: object;
  /** The payment intent the event concerns, when there is one. */
  paymentId?: string | null;
}

type OutboxModel = Model<any>;
const outboxes = new Map<string, OutboxModel>();

export function registerOutbox(model: OutboxModel): void {
  outboxes.set(model.collection.collectionName, model);
}

/** Builds events with ids and consecutive order numbers, ready to be pushed into an outbox. */
export async function buildEvents(accountId: string, specs: EventSpec[], createdAt: Date): Promise<PendingEvent[]> {
  if (specs.length === 0) return [];
  const first = await nextSequence('events', specs.length);
  const queuedAt = Date.now();
  return specs.map((s, i) => ({
    _id: newId('evt'),
    account_id: accountId,
    type: s.type,
    data_json: JSON.stringify(s.data),
    created_at: createdAt,
    seq: first + i,
    payment_id: s.paymentId ?? null,
    queued_at: queuedAt,
  }));
}

async function storeEvent(e: PendingEvent): Promise<StoredEvent> {
  const data = JSON.parse(e.data_json) as Record<string, unknown>;
  try {
    await EventModel.create({
      _id: e._id,
      account_id: e.account_id,
      type: e.type,
      data,
      created_at: e.created_at,
      seq: e.seq,
      payment_id: e.payment_id,
      livemode: false,
      hooks_done: false,
      hooks_lease_until: 0,
      stored_at: Date.now(),
    });
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
  return toStoredEvent({ ...e, data, livemode: false });
}

/**
 * Moves the pending events of one outbox document into `events`, in order, and queues their hooks.
 * Returns the events moved (empty when another dispatcher got there first).
 */
export async function dispatchOutbox(model: OutboxModel, docId: string): Promise<StoredEvent[]> {
  const doc = (await model.findById(docId, { pending_events: 1 }).lean()) as { pending_events?: PendingEvent[] } | null;
  const pending = [...(doc?.pending_events ?? [])].sort((a, b) => a.seq - b.seq);
  if (pending.length === 0) return [];
  const stored: StoredEvent[] = [];
  for (const e of pending) stored.push(await storeEvent(e));
  await model.updateOne({ _id: docId }, { $pull: { pending_events: { _id: { $in: pending.map((e) => e._id) } } } });
  for (const e of stored) void enqueueHooks(e);
  return stored;
}

/** Stores an event that is not part of a state change (test.ping, checkout.session.completed). */
export async function emitAccountEvent(
  accountId: string,
  type: string,
  data: object,
  opts: { now?: Date; paymentId?: string | null } = {},
): Promise<StoredEvent> {
  const createdAt = opts.now ?? (await nowForAccount(accountId));
  const [built] = await buildEvents(accountId, [{ type, data, paymentId: opts.paymentId ?? null }], createdAt);
  const stored = await storeEvent(built!);
  void enqueueHooks(stored);
  return stored;
}

const SWEEP_MIN_AGE_MS = 2_000;
const HOOK_SWEEP_MIN_AGE_MS = 5_000;
const SWEEP_BATCH = 100;

/** One pass of the sweeper: outboxes left behind by a crash, then events whose hooks have not finished. */
export async function sweepOutboxes(): Promise<{ outboxDocs: number; hookEvents: number }> {
  const now = Date.now();
  let outboxDocs = 0;
  for (const model of outboxes.values()) {
    const docs = (await model
      .find({ 'pending_events.queued_at': { $lte: now - SWEEP_MIN_AGE_MS } }, { _id: 1 })
      .limit(SWEEP_BATCH)
      .lean()) as Array<{ _id: string }>;
    for (const d of docs) {
      await dispatchOutbox(model, d._id);
      outboxDocs++;
    }
  }
  const events = await EventModel.find(
    { hooks_done: false, stored_at: { $lte: now - HOOK_SWEEP_MIN_AGE_MS }, hooks_lease_until: { $lte: now } },
    { _id: 1, account_id: 1, type: 1, data: 1, created_at: 1, seq: 1, payment_id: 1, livemode: 1 },
  )
    .sort({ seq: 1 })
    .limit(SWEEP_BATCH)
    .lean();
  for (const e of events) void enqueueHooks(toStoredEvent(e));
  return { outboxDocs, hookEvents: events.length };
}

let sweepTimer: NodeJS.Timeout | null = null;
let sweeping: Promise<unknown> | null = null;

export function startOutboxSweeper(intervalMs = 1_000): void {
  if (sweepTimer) return;
  sweepTimer = setInterval(() => {
    if (sweeping) return;
    sweeping = sweepOutboxes()
      .catch((err) => logger.error({ err }, 'outbox sweep failed'))
      .finally(() => {
        sweeping = null;
      });
  }, intervalMs);
  sweepTimer.unref();
}

export async function stopOutboxSweeper(): Promise<void> {
  if (sweepTimer) clearInterval(sweepTimer);
  sweepTimer = null;
  if (sweeping) await sweeping;
}
