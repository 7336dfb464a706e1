import mongoose, { Schema } from 'mongoose';

/**
 * A sandbox account. Everything else belongs to one through `account_id`.
 * `clock_offset_ms` is the account's sandbox clock: account time = real time + offset (never negative).
 */
export interface AccountRecord {
  _id: string;
  name: string;
  email: string | null;
  /** 5-digit Multicaixa entity, fixed at creation, shown on every reference payment. */
  reference_entity: string;
  clock_offset_ms: number;
  created_at: Date;
}

const accountSchema = new Schema<AccountRecord>(
  {
    _id: { type: String, required: true },
    name: { type: String, required: true },
    email: { type: String, default: null },
    reference_entity: { type: String, required: true },
    clock_offset_ms: { type: Number, required: true, default: 0 },
    created_at: { type: Date, required: true },
  },
  { versionKey: false, collection: 'accounts' },
);

export const AccountModel = mongoose.model<AccountRecord>('Account', accountSchema);
