import mongoose, { Schema } from 'mongoose';
import type { FailureCode, PaymentStatus } from './paymentStates';
import type { MethodCode } from './methods';
import type { PendingEvent, PendingTimer } from '../events/eventModel';

/**
 * A payment intent with its refunds and its outbox. Every write is conditional on `version`, so a state
 * change, the refund bookkeeping and its events are one atomic update; refunds are embedded so that a refund
 * reserves its amount in the write that checks what remains. More:
 * docs/decisions/notes/events-and-payments.md, "The payment record".
 */
export interface RefundRecord {
  _id: string;
  amount: number;
  status: 'PENDING' | 'SUCCEEDED';
  created_at: Date;
  updated_at: Date;
}

export interface PaymentRecord {
  _id: string;
  account_id: string;
  /** Global creation order: newest-first lists are deterministic within one millisecond. */
  seq: number;
  version: number;
  /**
   * How many events the intent has emitted: the next one's `sequence` is this plus one. Written with
   * the version-conditional change that emits them. Absent on intents created before it existed.
   */
  event_count?: number;
  amount: number;
  currency: 'AOA';
  payment_method: MethodCode;
  status: PaymentStatus;
  failure_code: FailureCode | null;
  customer: { mobile: string } | null;
  merchant_reference: string | null;
  /**
   * `merchant_reference` in lower case, for the dashboard's search that ignores case (paymentSearch.ts):
   * the engine has no collation, so the folded copy is stored and indexed. Absent when there is no
   * merchant reference, and on intents created before it existed (found by the exact spelling only).
   */
  merchant_reference_folded?: string;
  reference: { entity: string; number: string; expires_at: Date } | null;
  amount_refunded: number;
  amount_reserved: number;
  fee: number | null;
  fee_version: number | null;
  api_key_id: string | null;
  metadata: Record<string, string>;
  livemode: boolean;
  payment_link_id: string | null;
  checkout_session_id: string | null;
  refunds: RefundRecord[];
  succeeded_at: Date | null;
  pending_events: PendingEvent[];
  pending_timers: PendingTimer[];
  created_at: Date;
  updated_at: Date;
}

const refundSchema = new Schema<RefundRecord>(
  {
    _id: { type: String, required: true },
    amount: { type: Number, required: true },
    status: { type: String, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { _id: false, versionKey: false },
);

const paymentSchema = new Schema<PaymentRecord>(
  {
    _id: { type: String, required: true },
    account_id: { type: String, required: true },
    seq: { type: Number, required: true },
    version: { type: Number, required: true, default: 0 },
    event_count: { type: Number },
    amount: { type: Number, required: true },
    currency: { type: String, required: true },
    payment_method: { type: String, required: true },
    status: { type: String, required: true },
    failure_code: { type: String, default: null },
    customer: { type: Schema.Types.Mixed, default: null },
    merchant_reference: { type: String, default: null },
    merchant_reference_folded: { type: String },
    reference: { type: Schema.Types.Mixed, default: null },
    amount_refunded: { type: Number, required: true, default: 0 },
    amount_reserved: { type: Number, required: true, default: 0 },
    fee: { type: Number, default: null },
    fee_version: { type: Number, default: null },
    api_key_id: { type: String, default: null },
    metadata: { type: Schema.Types.Mixed, default: () => ({}) },
    livemode: { type: Boolean, required: true, default: false },
    payment_link_id: { type: String, default: null },
    checkout_session_id: { type: String, default: null },
    refunds: { type: [refundSchema], default: [] },
    succeeded_at: { type: Date, default: null },
    pending_events: { type: Schema.Types.Mixed, default: () => [] },
    pending_timers: { type: Schema.Types.Mixed, default: () => [] },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false, collection: 'payment_intents' },
);

paymentSchema.index({ account_id: 1, seq: -1 });
paymentSchema.index({ account_id: 1, status: 1, seq: -1 });
// The dashboard's overview (domain/overview): a range of created_at, with every field its aggregation
// reads, so that a database able to answer from the index alone (a covered scan) reads no payment.
paymentSchema.index({ account_id: 1, created_at: 1, status: 1, payment_method: 1, amount: 1 });
// The dashboard's search (paymentSearch.ts): one key each, newest first, so a page is an index walk. The
// mobile index is partial: intents without a customer (most references) stay out of it.
paymentSchema.index({ account_id: 1, merchant_reference: 1, seq: -1 });
paymentSchema.index({ account_id: 1, 'customer.mobile': 1, seq: -1 }, { partialFilterExpression: { 'customer.mobile': { $exists: true } } });
// The search by merchant reference ignoring case. Partial like the mobile one: intents without a merchant
// reference have no folded copy.
paymentSchema.index(
  { account_id: 1, merchant_reference_folded: 1, seq: -1 },
  { partialFilterExpression: { merchant_reference_folded: { $exists: true } } },
);
// Sparse: most intents have no refunds and an empty outbox, and would otherwise all sit under one
// null key that every insert and outbox clean-up has to maintain. Their queries (a refund id, an age
// range) never look for null.
paymentSchema.index({ 'refunds._id': 1 }, { sparse: true });
paymentSchema.index({ 'pending_events.queued_at': 1 }, { sparse: true });
paymentSchema.index({ 'pending_timers.queued_at': 1 }, { sparse: true });
// A reference number belongs to one intent for ever (stricter than "unique among unexpired
// references", and it keeps `reference_paid` look-ups unambiguous); express intents have none.
paymentSchema.index({ 'reference.number': 1 }, { unique: true, sparse: true });

export const PaymentModel = mongoose.model<PaymentRecord>('PaymentIntent', paymentSchema);
