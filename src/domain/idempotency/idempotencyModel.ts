import mongoose, { Schema } from 'mongoose';

/**
 * One Idempotency-Key use. `_id` is a hash of the scope (account + method + path + key), so "one record
 * per key" rests on the primary key. A record is `in_progress` while its first request runs — owned by
 * `owner` until `lease_until` (renewed while running; a crashed owner's lease expires and another
 * request with the same body takes over) — then `completed` with the response, kept for ever. A 5xx
 * answer is not stored: the record becomes `released` and the next request with the key claims it.
 *
 * `object_suffix` is drawn when the key is first claimed and kept across takeovers and releases (for the
 * same body): the object the request creates takes its id from it, so a retry after a crash or a 5xx that
 * happened after the object was written finds that object instead of creating a second one.
 */
export interface IdempotencyRecord {
  _id: string;
  account_id: string;
  method: string;
  path: string;
  key: string;
  body_hash: string;
  object_suffix: string;
  state: 'in_progress' | 'completed' | 'released';
  owner: string;
  lease_until: number;
  status: number | null;
  /** The response body as JSON text: stored opaque, replayed byte for byte. */
  response_json: string | null;
  created_at: Date;
  completed_at: Date | null;
}

const idempotencySchema = new Schema<IdempotencyRecord>(
  {
    _id: { type: String, required: true },
    account_id: { type: String, required: true },
    method: { type: String, required: true },
    path: { type: String, required: true },
    key: { type: String, required: true },
    body_hash: { type: String, required: true },
    object_suffix: { type: String, required: true },
    state: { type: String, required: true },
    owner: { type: String, required: true },
    lease_until: { type: Number, required: true },
    status: { type: Number, default: null },
    response_json: { type: String, default: null },
    created_at: { type: Date, required: true },
    completed_at: { type: Date, default: null },
  },
  { versionKey: false, collection: 'idempotency_keys' },
);

// A sandbox reset deletes an account's records (src/domain/sandbox/sandboxResetService.ts): without it,
// a scan of every account's. One more key per idempotent request's insert.
idempotencySchema.index({ account_id: 1 }, { name: 'by_account' });

export const IdempotencyModel = mongoose.model<IdempotencyRecord>('IdempotencyKey', idempotencySchema);
