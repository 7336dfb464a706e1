import mongoose, { Schema } from 'mongoose';

/**
 * One Idempotency-Key use; `_id` is a hash of its scope, so one record per key rests on the primary key.
 * `in_progress` under its owner's lease, then `completed` (kept for ever) or `released` after a 5xx.
 * `object_suffix` gives the created object its id, so a retry after a crash finds that object instead of
 * creating a second. More: docs/decisions/notes/events-and-payments.md, "The Idempotency-Key record".
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
