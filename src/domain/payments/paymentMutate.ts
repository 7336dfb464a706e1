import { ApiError } from '../../errors';
import { findByIdBatched, updateIfMatchBatched } from '../../db/batching';
import { accountOffsetMs } from '../clock/accountTime';
import { buildEvents, buildTimers, dispatchKnown, type EventSink, type TimerSpec } from '../events/outbox';
import { statusChangeId, type StoredEvent } from '../events/eventHooks';
import { EventModel } from '../events/eventModel';
import { PaymentModel, type PaymentRecord } from './paymentModel';
import { paymentStatusChanged } from '../overview/rollupWrites';
import { paymentFinal } from '../../metrics/domain';
import { isFinalStatus } from './paymentStates';
import { toPaymentIntentResource } from './paymentSerializer';

/**
 * The one way a payment intent changes after creation: `decide` on the intent as read, one update conditional
 * on its `version` (fields, version bump and outbox together), `decide` again when the write misses. The
 * outbox is then dispatched with what the version condition says it holds, without reading it back. More:
 * docs/decisions/notes/events-and-payments.md, "mutatePayment".
 */
export interface PaymentChange {
  set?: Partial<Omit<PaymentRecord, '_id' | 'account_id' | 'version' | 'pending_events' | 'pending_timers' | 'updated_at' | 'created_at'>>;
  /** Events to emit; `data` defaults to the PaymentIntent as it is after the change. */
  events?: Array<{ type: string; data?: Record<string, unknown> }>;
  /** Timers the new state needs (scheduled by the dispatcher once the change is written). */
  timers?: TimerSpec[];
  /** Set `updated_at` (default true). False for bookkeeping invisible in the resource. */
  touch?: boolean;
}

export type DecideChange = (payment: PaymentRecord, now: Date) => PaymentChange | null;

export interface MutationResult {
  payment: PaymentRecord;
  changed: boolean;
  events: StoredEvent[];
}

const MAX_ATTEMPTS = 500;

export interface MutateOptions {
  /** Only this account's payment (another account's is answered as missing). */
  accountId?: string;
  /** "Now" in account time (a timer's); otherwise the account's clock is read. */
  now?: Date;
  /**
   * The whole payment (outbox included) as the caller has just read it: the first attempt decides on
   * it instead of reading it again. A stale copy only costs a missed write and a fresh read.
   */
  current?: PaymentRecord;
  /** The account's clock offset as the caller read it moments ago, for the timers the change schedules. */
  offsetMs?: number;
  /**
   * Event numbers the caller reserved (nextSequence('events', count)) while it read the payment, for
   * the payment at `version` (as the caller's own last write left it): taken when the change is made on
   * that version and emits exactly `count` events, otherwise left unused and the events reserve their
   * own. On any other version a change written in between may hold later numbers than these, and its
   * events must come first; a retry always finds another version.
   */
  eventSeq?: { first: number; count: number; version: number };
}

/**
 * How many events the intent has emitted so far. Intents created before `event_count` existed count
 * theirs once (its events stored and any still in its outbox), on their first change since.
 */
async function eventCountOf(p: PaymentRecord): Promise<number> {
  if (p.event_count !== undefined) return p.event_count;
  const stored = await EventModel.countDocuments({ payment_id: p._id, account_id: p.account_id, type: { $ne: 'refund.succeeded' } });
  return stored + (p.pending_events ?? []).filter((e) => e.type !== 'refund.succeeded').length;
}

/** `sink`: the changing gateway's (its hooks get the events, its poller the timers). */
export async function mutatePayment(sink: EventSink, paymentId: string, decide: DecideChange, opts: MutateOptions = {}): Promise<MutationResult> {
  let offset = opts.offsetMs;
  let handed = opts.current;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const current = handed ?? (await findByIdBatched<PaymentRecord>(PaymentModel, paymentId));
    handed = undefined;
    if (!current || (opts.accountId !== undefined && current.account_id !== opts.accountId)) throw ApiError.notFound('payment_intent', paymentId);

    if (!opts.now) offset ??= await accountOffsetMs(current.account_id);
    const base = opts.now ?? new Date(Date.now() + offset!);
    // updated_at never goes backwards, whatever clock a caller passes.
    const now = new Date(Math.max(base.getTime(), new Date(current.updated_at).getTime()));

    const change = decide(current, now);
    if (!change) return { payment: current, changed: false, events: [] };

    const set: Record<string, unknown> = { ...(change.set ?? {}) };
    if (change.touch !== false) set.updated_at = now;
    // The intent's own events are numbered on from its count; another object's (a refund's) is that
    // object's only event. The version condition below makes the count the one this change follows.
    const own = (change.events ?? []).filter((e) => !e.data).length;
    const before = own > 0 ? await eventCountOf(current) : 0;
    if (own > 0) set.event_count = before + own;
    const next: PaymentRecord = { ...current, ...(set as Partial<PaymentRecord>), version: current.version + 1 };
    const resource = toPaymentIntentResource(next);
    let sequence = before;
    const specs = (change.events ?? []).map((e) => ({ type: e.type, data: e.data ?? resource, paymentId, sequence: e.data ? 1 : ++sequence }));
    const seq = opts.eventSeq;
    const reserved = seq && seq.version === current.version && seq.count === specs.length ? seq.first : undefined;
    const events = await buildEvents(current.account_id, specs, now, reserved);

    const timers = buildTimers(change.timers ?? []);

    const update: Record<string, unknown> = { $inc: { version: 1 } };
    if (Object.keys(set).length > 0) update.$set = set;
    const push: Record<string, unknown> = {};
    if (events.length > 0) push.pending_events = { $each: events };
    if (timers.length > 0) push.pending_timers = { $each: timers };
    if (Object.keys(push).length > 0) update.$push = push;
    // Batched with the other payments' writes of this turn (the rail steps of a claimed timer batch):
    // still conditional on the version, and it says whether it applied (false, never a new payment, if
    // a sandbox reset deleted this one meanwhile).
    const applied = await updateIfMatchBatched(PaymentModel, { _id: paymentId, version: current.version }, update);
    if (!applied) {
      // Lost a race: back off a little (more under heavy contention) and decide again.
      if (attempt > 2) await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, attempt * 2)));
      continue;
    }
    // The overview's counts move beside the dispatch; the version condition makes `current.status` the one replaced.
    if (next.status !== current.status) {
      void paymentStatusChanged(current, current.status, next.status);
      if (isFinalStatus(next.status)) paymentFinal(next.payment_method)(next.status).inc();
    }
    if (events.length === 0 && next.status !== current.status) {
      sink.hooks.announceStatusChanged({ id: statusChangeId(paymentId, next.status, next.updated_at), paymentId, status: next.status, intent: { ...resource } });
    }
    const stored =
      events.length > 0 || timers.length > 0
        ? await dispatchKnown(sink, PaymentModel, paymentId, [...(current.pending_events ?? []), ...events], [...(current.pending_timers ?? []), ...timers], {
            accountOffsetMs: offset,
            // The events' data is known for ours (the intent as written, or the caller's object); the
            // ones left from before are parsed from their JSON.
            eventData: [...(current.pending_events ?? []).map(() => undefined), ...(change.events ?? []).map((e) => e.data ?? resource)],
          })
        : [];
    return { payment: { ...next, pending_events: [], pending_timers: [] }, changed: true, events: stored };
  }
  throw new Error(`payment ${paymentId}: too much contention, gave up after ${MAX_ATTEMPTS} attempts`);
}
