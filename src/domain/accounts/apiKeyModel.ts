import mongoose, { Schema } from 'mongoose';
import type { ApiKeyType, Permission } from './permissions';

export type { ApiKeyType };

/** An API key. Only the SHA-256 of the secret is stored; `last4` lets a person recognise it. */
export interface ApiKeyRecord {
  _id: string;
  account_id: string;
  type: ApiKeyType;
  name: string | null;
  /** Only ever written from a validated request (the contract's ApiKeyPermission), so never another string. */
  permissions: Permission[];
  key_hash: string;
  last4: string;
  created_at: Date;
  revoked_at: Date | null;
}

const apiKeySchema = new Schema<ApiKeyRecord>(
  {
    _id: { type: String, required: true },
    account_id: { type: String, required: true, index: true },
    type: { type: String, required: true, enum: ['secret', 'publishable', 'restricted'] },
    name: { type: String, default: null },
    permissions: { type: [String], default: [] },
    key_hash: { type: String, required: true, unique: true },
    last4: { type: String, required: true },
    created_at: { type: Date, required: true },
    revoked_at: { type: Date, default: null },
    // rate_count and rate_window_end, the key's rate-limit window before it moved into its account's
    // document (key_rates), may still be in older keys' documents: nothing reads them.
  },
  { versionKey: false, collection: 'api_keys' },
);

export const ApiKeyModel = mongoose.model<ApiKeyRecord>('ApiKey', apiKeySchema);
