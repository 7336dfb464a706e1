import mongoose, { Schema } from 'mongoose';
import type { MethodCode } from '../payments/methods';

/**
 * A shareable payment link. `code` is the short public code in the page URL; the unique index makes a
 * collision between two random codes a retry, never two links behind one URL. Links are never deleted:
 * DELETE only sets `active: false`, so earlier payments keep pointing at a link that exists.
 */
export interface PaymentLinkRecord {
  _id: string;
  account_id: string;
  /** Creation order: newest-first lists are stable within one millisecond. */
  seq: number;
  code: string;
  amount: number;
  currency: 'AOA';
  methods: MethodCode[];
  description: string | null;
  active: boolean;
  livemode: boolean;
  created_at: Date;
  deactivated_at: Date | null;
}

const paymentLinkSchema = new Schema<PaymentLinkRecord>(
  {
    _id: { type: String, required: true },
    account_id: { type: String, required: true },
    seq: { type: Number, required: true },
    code: { type: String, required: true },
    amount: { type: Number, required: true },
    currency: { type: String, required: true },
    methods: { type: [String], required: true },
    description: { type: String, default: null },
    active: { type: Boolean, required: true, default: true },
    livemode: { type: Boolean, required: true, default: false },
    created_at: { type: Date, required: true },
    deactivated_at: { type: Date, default: null },
  },
  { versionKey: false, collection: 'payment_links' },
);

paymentLinkSchema.index({ code: 1 }, { unique: true });
paymentLinkSchema.index({ account_id: 1, seq: -1 });
// Counts the account's active links for its cap (createPaymentLink).
paymentLinkSchema.index({ account_id: 1, active: 1 });

export const PaymentLinkModel = mongoose.model<PaymentLinkRecord>('PaymentLink', paymentLinkSchema);
