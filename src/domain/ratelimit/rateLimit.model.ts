import mongoose, { Schema } from 'mongoose';

/** One counting window per bucket (an API key, or a client IP on public routes). */
export interface RateLimitRecord {
  _id: string;
  count: number;
  window_end: Date;
}

const rateLimitSchema = new Schema<RateLimitRecord>(
  {
    _id: { type: String, required: true },
    count: { type: Number, required: true },
    window_end: { type: Date, required: true },
  },
  { versionKey: false, collection: 'rate_limits' },
);

export const RateLimitModel = mongoose.model<RateLimitRecord>('RateLimit', rateLimitSchema);
