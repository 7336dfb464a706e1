import mongoose, { Schema } from 'mongoose';
import type { TimerRecord } from '../../platform/timers/timerModel';

/**
 * Stored events. `_id` is the public `evt_` id, so re-inserting an event after a crash is a harmless
 * duplicate-key error. `seq` comes from a global counter allocated when the event is built (before the
 * atomic write that makes it real), which gives a total, stable order: newest first = `seq` descending.
 * `hooks_done` stays false until every `onEventStored` hook has succeeded; the sweeper retries it.
 */
interface EventBase {
  _id: string;
  account_id: string;
  type: string;
  created_at: Date;
  seq: number;
  /**
   * The event's place among its object's events (`data.id`): 1, 2, 3... in the order the object changed.
   * Given where the change is written (a payment's version-conditional write, paymentMutate.ts), so it
   * holds across processes. Absent on events stored before it existed: read as 1.
   */
  sequence?: number;
  payment_id: string | null;
  /**
   * With tracing on, the span the event was emitted in (a request's, a timer firing's) as a W3C
   * traceparent: its deliveries' attempts are that span's children (src/tracing).
   */
  trace_parent?: string;
}

/**
 * An event waiting in an outbox document. `data` travels as JSON text: it is written by update
 * operators ($push), which real MongoDB refuses for values holding `$`-prefixed keys (metadata may
 * have them); the dispatcher parses it and inserts the object into `events`.
 */
export interface PendingEvent extends EventBase {
  data_json: string;
  /** Real time (ms) the event entered an outbox; the sweeper only picks up outboxes older than a moment. */
  queued_at: number;
}

/**
 * A timer waiting in an outbox document: written atomically with the state change that needs it and
 * scheduled by the dispatcher (idempotently, `_id` = the timer's dedupe id), so that no state can be
 * reached without its follow-up timer and no timer can fire before the state it serves exists. It is
 * the stored timer (TimerRecord) as far as it is known before insertion, under the same field names.
 */
export type PendingTimer = Pick<TimerRecord, '_id' | 'account_id' | 'kind' | 'ref_id' | 'due_at' | 'payload' | 'due_base' | 'trace_parent'> & {
  dedupe_key: string;
  queued_at: number;
  /**
   * `due_base` as outboxes written before it was named so called it (read as `due_base ?? clock_base`):
   * not TimerRecord's `clock_base`, which is `fire_at`'s base.
   */
  clock_base?: number;
};

export interface EventRecord extends EventBase {
  /**
   * The object as JSON text, as it travelled in the outbox: stored and streamed as one string, it
   * costs the database and the change stream far less than a nested document, and it is only parsed
   * when served. Events written before this field existed carry `data` as an object instead.
   */
  data_json?: string;
  data?: Record<string, unknown>;
  livemode: boolean;
  hooks_done: boolean;
  /** Real-time ms until which one process owns running the hooks; 0 = free. */
  hooks_lease_until: number;
  /** Whose lease that is (EventHooks.leaseOwner), so that a gateway stopping can hand it back; absent on older events. */
  hooks_lease_owner?: string | null;
  hook_attempts?: number;
  /** Set when the hooks kept failing and were given up. */
  hooks_failed?: boolean;
  /** Real time (ms) of storage, so the sweeper leaves fresh events to the hooks their process queued. */
  stored_at: number;
  /** The gateway process that stored it (src/processId.ts); absent on events stored before this field. */
  origin?: string;
}

const eventSchema = new Schema<EventRecord>(
  {
    _id: { type: String, required: true },
    account_id: { type: String, required: true },
    type: { type: String, required: true },
    data_json: { type: String },
    data: { type: Schema.Types.Mixed },
    created_at: { type: Date, required: true },
    seq: { type: Number, required: true },
    sequence: { type: Number },
    payment_id: { type: String, default: null },
    livemode: { type: Boolean, required: true, default: false },
    hooks_done: { type: Boolean, required: true, default: false },
    hooks_lease_until: { type: Number, required: true, default: 0 },
    hooks_lease_owner: { type: String, default: null },
    hook_attempts: { type: Number, default: 0 },
    hooks_failed: { type: Boolean, default: false },
    stored_at: { type: Number, required: true },
    origin: { type: String },
    trace_parent: { type: String },
  },
  { versionKey: false, minimize: false, collection: 'events' },
);

eventSchema.index({ account_id: 1, seq: -1 });
eventSchema.index({ account_id: 1, type: 1, seq: -1 });
eventSchema.index({ payment_id: 1, seq: 1 });
// The sweeper's look-up of events whose hooks have not all run: partial, so the index holds only those
// (a handful) rather than every event ever stored.
eventSchema.index({ stored_at: 1 }, { partialFilterExpression: { hooks_done: false } });

export const EventModel = mongoose.model<EventRecord>('Event', eventSchema);

/** Named monotonic counters (event order, payment order). */
interface SequenceRecord {
  _id: string;
  value: number;
}

const sequenceSchema = new Schema<SequenceRecord>(
  { _id: { type: String, required: true }, value: { type: Number, required: true } },
  { versionKey: false, collection: 'sequences' },
);

export const SequenceModel = mongoose.model<SequenceRecord>('Sequence', sequenceSchema);

/** An event's object, whichever way it was stored. */
export function eventDataOf(e: Pick<EventRecord, 'data' | 'data_json'>): Record<string, unknown> {
  if (e.data_json !== undefined) return JSON.parse(e.data_json) as Record<string, unknown>;
  return e.data ?? {};
}
