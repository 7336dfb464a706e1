import mongoose, { Schema } from 'mongoose';
import { RETENTION } from '../../config';

/**
 * How many requests were refused with 401 or 429, per account and UTC hour. Those answers are counted
 * here rather than stored one by one in `request_logs`: a client that keeps guessing keys or hammering
 * past its limit would otherwise write a log document per refused request, and push the account's
 * real requests out of GET /logs. Refusals that name no account (a 401 for an unknown key, a 429 of a
 * per-IP bucket) count under `account_id: null`.
 */
export interface RefusedRequestsRecord {
  /** `<account id or "-">:<hour, ISO>`: one document per account and hour. */
  _id: string;
  account_id: string | null;
  hour: Date;
  /** 401 answers. */
  unauthorized: number;
  /** 429 answers. */
  rate_limited: number;
}

const refusedRequestsSchema = new Schema<RefusedRequestsRecord>(
  {
    _id: { type: String, required: true },
    account_id: { type: String, default: null },
    hour: { type: Date, required: true },
    unauthorized: { type: Number, default: 0 },
    rate_limited: { type: Number, default: 0 },
  },
  { versionKey: false, collection: 'refused_requests' },
);
// An account's hours in order (refusedRequestCounts).
refusedRequestsSchema.index({ account_id: 1, hour: 1 });
// Kept REFUSED_COUNT_RETENTION_DAYS (30) after their hour, then deleted by the TTL monitor.
refusedRequestsSchema.index({ hour: 1 }, { name: 'hour_ttl', expireAfterSeconds: RETENTION.refusedCountSeconds });

export const RefusedRequestsModel = mongoose.model<RefusedRequestsRecord>('RefusedRequests', refusedRequestsSchema);
