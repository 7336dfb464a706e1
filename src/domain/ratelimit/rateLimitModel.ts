import mongoose, { Schema } from 'mongoose';
import { RETENTION } from '../../config';

/** One counting window per bucket (a client IP on public routes, an account: `account:<id>`). */
export interface RateLimitRecord {
  _id: string;
  count: number;
  window_end: Date;
  /** The window's end on the monotonic clock of the machine that opened it (rateLimitService.ts). */
  window_clock?: string | null;
  window_mono_end?: number | null;
}

const rateLimitSchema = new Schema<RateLimitRecord>(
  {
    _id: { type: String, required: true },
    count: { type: Number, required: true },
    window_end: { type: Date, required: true },
    window_clock: { type: String },
    window_mono_end: { type: Number },
  },
  { versionKey: false, collection: 'rate_limits' },
);
// A window that ended is worth nothing (the next request opens a new one, upserting the document if it
// is gone), so the TTL monitor deletes it RATE_LIMIT_COUNTER_RETENTION_SECONDS after its end: the
// collection holds the buckets of about the last minute, not every IP that ever called.
rateLimitSchema.index({ window_end: 1 }, { name: 'ended_window_ttl', expireAfterSeconds: RETENTION.rateLimitCounterSeconds });

export const RateLimitModel = mongoose.model<RateLimitRecord>('RateLimit', rateLimitSchema);
