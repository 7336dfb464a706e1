import mongoose, { Schema } from 'mongoose';

/**
 * A client token: read access to one payment's public view, for a merchant's own frontend. Only the
 * SHA-256 of the secret (`ct_test_…`) is stored; the id (`ctok_…`) is what logs and the API name it by.
 */
export interface ClientTokenRecord {
  _id: string;
  account_id: string;
  payment_intent: string;
  token_hash: string;
  /** On the account's sandbox clock, like every timestamp the account's objects carry. */
  expires_at: Date;
  created_at: Date;
}

/** Expired tokens stay a day (a DELETE of a just-expired token still finds it), then the TTL index prunes them. */
export const EXPIRED_TOKEN_RETENTION_SECONDS = 86_400;

const clientTokenSchema = new Schema<ClientTokenRecord>(
  {
    _id: { type: String, required: true },
    account_id: { type: String, required: true },
    payment_intent: { type: String, required: true },
    token_hash: { type: String, required: true, unique: true },
    expires_at: { type: Date, required: true },
    created_at: { type: Date, required: true },
  },
  { versionKey: false, collection: 'client_tokens' },
);

// `expires_at` is on the account's clock, which is never behind real time: pruning by real time a day
// after it never removes a token that is still valid.
// A sandbox reset deletes an account's tokens (src/domain/sandbox/sandboxResetService.ts).
clientTokenSchema.index({ account_id: 1 }, { name: 'by_account' });
clientTokenSchema.index({ expires_at: 1 }, { name: 'expired_ttl', expireAfterSeconds: EXPIRED_TOKEN_RETENTION_SECONDS });

export const ClientTokenModel = mongoose.model<ClientTokenRecord>('ClientToken', clientTokenSchema);
