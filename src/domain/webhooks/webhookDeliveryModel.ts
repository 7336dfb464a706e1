import mongoose, { Schema } from 'mongoose';
import type { ChaosCopyKind, ChaosKind, ChaosPlan } from './chaos';
import type { DeliveryState } from './deliveryStates';

/**
 * One event to one endpoint, created durably by the `onEventStored` hook; the unique index on (event_id,
 * endpoint_id, copy) makes that hook idempotent. `body` is fixed at creation, so every attempt sends the
 * same bytes; a retry timer does nothing when the delivery has moved past its `step`; `lease_until` marks an
 * attempt in flight. The fields: docs/decisions/notes/webhooks.md, "The delivery record".
 */

/** One attempt as the dashboard's delivery detail lists it (account time; `error` in words, null after a 2xx). */
export interface AttemptLogEntry {
  at: Date;
  status: number;
  ms: number;
  error: string | null;
}

/** How many attempts a delivery keeps: the 4 scheduled ones and the latest manual retries. */
export const ATTEMPT_LOG_SIZE = 20;

export interface WebhookDeliveryRecord {
  _id: string;
  account_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  /** Order of the event (newest first = event_seq descending). */
  event_seq: number;
  payment_id: string | null;
  body: string;
  state: DeliveryState;
  step: number;
  attempts: number;
  last_status: number | null;
  last_ms: number | null;
  /** Account time. */
  last_attempt_at: Date | null;
  signature_header: string | null;
  /** Why the last attempt failed, in words (attemptFailure.ts); null after a 2xx or before any attempt. */
  last_error?: string | null;
  /** Account time of the next scheduled attempt (RETRYING). */
  next_attempt_at: Date | null;
  lease_until: number;
  /** Whose lease `lease_until` is (DeliveryEngine.leaseOwner): a gateway stopping hands its own back. */
  lease_owner?: string | null;
  created_at: Date;
  /** Account time of its event's creation; absent on deliveries written before the overview existed. */
  event_created_at?: Date;
  /** Account time of the first successful attempt; absent before one (and on older deliveries). */
  delivered_at?: Date | null;
  /** With tracing on, the span its event was emitted in (src/tracing): each attempt is its child. */
  trace_parent?: string;
  /** What the endpoint's chaos did to it (chaos.ts); absent or null when nothing. */
  chaos?: ChaosKind | null;
  /** On a genuine delivery: the chaos decided at its creation, carried out by whoever attempts it. */
  chaos_plan?: ChaosPlan | null;
  /** True while chaos holds it before its first attempt (chaosHold.ts): only whoever claims it sends it. */
  held?: boolean;
  /**
   * Set on a chaos copy only (its kind): copies are sent once, never retried, swept or recovered, and
   * stay out of the overview (they have no `event_created_at`).
   */
  copy?: ChaosCopyKind;
  /**
   * Every attempt, oldest first, at most ATTEMPT_LOG_SIZE (the newest): the `last_*` fields say only
   * the last one. Absent on deliveries attempted before it existed. Not part of the REST resource.
   */
  attempt_log?: AttemptLogEntry[];
  /** The request headers of the last attempt (signatures included), as sent; not part of the REST resource. */
  request_headers?: Record<string, string> | null;
}

const deliverySchema = new Schema<WebhookDeliveryRecord>(
  {
    _id: { type: String, required: true },
    account_id: { type: String, required: true },
    endpoint_id: { type: String, required: true },
    event_id: { type: String, required: true },
    event_type: { type: String, required: true },
    event_seq: { type: Number, required: true },
    payment_id: { type: String, default: null },
    body: { type: String, required: true },
    state: { type: String, required: true },
    step: { type: Number, required: true, default: 0 },
    attempts: { type: Number, required: true, default: 0 },
    last_status: { type: Number, default: null },
    last_ms: { type: Number, default: null },
    last_attempt_at: { type: Date, default: null },
    signature_header: { type: String, default: null },
    last_error: { type: String, default: null },
    next_attempt_at: { type: Date, default: null },
    lease_until: { type: Number, required: true, default: 0 },
    lease_owner: { type: String, default: null },
    created_at: { type: Date, required: true },
    event_created_at: { type: Date },
    delivered_at: { type: Date },
    trace_parent: { type: String },
    chaos: { type: String, default: undefined },
    chaos_plan: { type: Schema.Types.Mixed, default: undefined },
    held: { type: Boolean, default: undefined },
    copy: { type: String, default: undefined },
    attempt_log: { type: [Schema.Types.Mixed], default: undefined },
    request_headers: { type: Schema.Types.Mixed, default: undefined },
  },
  { versionKey: false, minimize: false, collection: 'webhook_deliveries' },
);

// One genuine delivery per event and endpoint (`copy` absent), and at most one chaos copy of each kind.
deliverySchema.index({ event_id: 1, endpoint_id: 1, copy: 1 }, { unique: true });
// An endpoint's deliveries, newest first: the order of the list (event_seq, then _id), so no sort.
deliverySchema.index({ endpoint_id: 1, event_seq: -1, _id: -1 });
// The dashboard's endpoint page (endpointDeliveries.ts): an endpoint's deliveries newest first, filtered
// by state or event type. One index per filter, so that a page reads only the rows it shows (a rare state,
// dead letters, would otherwise be looked for among all the endpoint's deliveries). With both filters the
// planner takes the more selective of the two; a third index for the pair would cost every write more.
deliverySchema.index({ endpoint_id: 1, state: 1, event_seq: -1, _id: -1 });
deliverySchema.index({ endpoint_id: 1, event_type: 1, event_seq: -1, _id: -1 });
// The dashboard's endpoint table: an endpoint's recent success rate (endpointDeliveries.ts), two counts
// bounded by the 24 h window rather than read across all the endpoint's deliveries.
deliverySchema.index({ endpoint_id: 1, event_created_at: 1, state: 1 });
// A payment's deliveries across endpoints, in event order (paymentDeliveries.ts).
deliverySchema.index({ payment_id: 1, event_seq: 1 });
// Recovery of deliveries whose sender died: partial, so delivered and dead-lettered ones leave it.
deliverySchema.index({ lease_until: 1 }, { partialFilterExpression: { state: 'PENDING' } });
// The deliveries waiting for a retry, counted for pgw_webhook_backlog (webhookBacklog.ts): partial, so
// it holds only the failing few, and the writes of deliveries that succeed at once never touch it.
deliverySchema.index({ next_attempt_at: 1 }, { name: 'retrying_by_next_attempt', partialFilterExpression: { state: 'RETRYING' } });
// The dashboard's overview (domain/overview): deliveries of the events of a time range, with every
// field its aggregation reads, so that a database able to answer from the index alone reads no delivery.
deliverySchema.index({ account_id: 1, event_created_at: 1, state: 1, delivered_at: 1 });

export const WebhookDeliveryModel = mongoose.model<WebhookDeliveryRecord>('WebhookDelivery', deliverySchema);
