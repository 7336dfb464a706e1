import mongoose, { Schema } from 'mongoose';
import type { MethodCode } from '../payments/methods';
import type { PendingEvent } from '../events/event.model';

export type CheckoutSessionStatus = 'OPEN' | 'COMPLETED' | 'EXPIRED';

/**
 * A hosted checkout session. Its only state changes are OPEN → COMPLETED (a payment of it succeeded)
 * and OPEN → EXPIRED (30 minutes passed), each a conditional update on `status: OPEN`, so whichever
 * comes first wins and the other changes nothing. `pending_events` makes the document an outbox: the
 * completion and its `checkout.session.completed` event are one atomic write (see events/outbox.ts).
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
  },
  { versionKey: false, minimize: false, collection: 'checkout_sessions' },
);

checkoutSessionSchema.index({ account_id: 1, seq: -1 });
checkoutSessionSchema.index({ 'pending_events.queued_at': 1 }, { sparse: true }); // see payment.model.ts
checkoutSessionSchema.index({ 'pending_timers.queued_at': 1 }, { sparse: true }); // the outbox sweeper's look-up

export const CheckoutSessionModel = mongoose.model<CheckoutSessionRecord>('CheckoutSession', checkoutSessionSchema);
