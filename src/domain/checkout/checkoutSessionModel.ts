import mongoose, { Schema } from 'mongoose';
import type { MethodCode } from '../payments/methods';
import type { PendingEvent } from '../events/eventModel';

export type CheckoutSessionStatus = 'OPEN' | 'COMPLETED' | 'EXPIRED';

/**
 * A hosted checkout session: OPEN → COMPLETED or OPEN → EXPIRED, each conditional on OPEN, so the first wins.
 * `pending_events` makes it an outbox (events/outbox.ts); `active_payment_id` is the claim that keeps it to
 * one payment in flight (absent reads as no claim). More: docs/decisions/notes/checkout.md, "The session
 * record".
 */
export interface CheckoutSessionRecord {
  _id: string;
  account_id: string;
  seq: number;
  amount: number;
  currency: 'AOA';
  methods: MethodCode[];
  status: CheckoutSessionStatus;
  payment_intent: string | null;
  merchant_reference: string | null;
  success_url: string | null;
  cancel_url: string | null;
  expires_at: Date;
  livemode: boolean;
  created_at: Date;
  updated_at: Date;
  pending_events: PendingEvent[];
  /** The page payment in flight (or the one that completed the session); null when none. */
  active_payment_id?: string | null;
  /** Wall-clock time of the claim (not the sandbox clock: it dates a process's work, for the stale-claim repair). */
  active_payment_claimed_at?: Date | null;
  /** Set by the stale-claim repair before it looks for the payment; the claimant looks for it after its insert. */
  claim_abandoned?: boolean;
}

const checkoutSessionSchema = new Schema<CheckoutSessionRecord>(
  {
    _id: { type: String, required: true },
    account_id: { type: String, required: true },
    seq: { type: Number, required: true },
    amount: { type: Number, required: true },
    currency: { type: String, required: true },
    methods: { type: [String], required: true },
    status: { type: String, required: true },
    payment_intent: { type: String, default: null },
    merchant_reference: { type: String, default: null },
    success_url: { type: String, default: null },
    cancel_url: { type: String, default: null },
    expires_at: { type: Date, required: true },
    livemode: { type: Boolean, required: true, default: false },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
    pending_events: { type: Schema.Types.Mixed, default: () => [] },
    active_payment_id: { type: String, default: null },
    active_payment_claimed_at: { type: Date, default: null },
    claim_abandoned: { type: Boolean, default: false },
  },
  { versionKey: false, minimize: false, collection: 'checkout_sessions' },
);

checkoutSessionSchema.index({ account_id: 1, seq: -1 });
// The dashboard's list filtered by status, newest first (listCheckoutSessions).
checkoutSessionSchema.index({ account_id: 1, status: 1, seq: -1 });
// The OPEN sessions already past their expiry, which that list settles before it reads (their timers
// may lag): a range on the expiry, so the look-up reads only those, not every open session.
checkoutSessionSchema.index({ account_id: 1, status: 1, expires_at: 1 });
checkoutSessionSchema.index({ 'pending_events.queued_at': 1 }, { sparse: true }); // see paymentModel.ts
checkoutSessionSchema.index({ 'pending_timers.queued_at': 1 }, { sparse: true }); // the outbox sweeper's look-up

export const CheckoutSessionModel = mongoose.model<CheckoutSessionRecord>('CheckoutSession', checkoutSessionSchema);
