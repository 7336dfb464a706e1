import mongoose, { Schema } from 'mongoose';

/** One advance of an account's sandbox clock at a time, across processes: a lease per account. */
export interface ClockLockRecord {
  _id: string; // account id
  owner: string;
  lease_until: number;
}

const clockLockSchema = new Schema<ClockLockRecord>(
  {
    _id: { type: String, required: true },
    owner: { type: String, required: true },
    lease_until: { type: Number, required: true },
  },
  { versionKey: false, collection: 'sandbox_clock_locks' },
);

export const ClockLockModel = mongoose.model<ClockLockRecord>('SandboxClockLock', clockLockSchema);
