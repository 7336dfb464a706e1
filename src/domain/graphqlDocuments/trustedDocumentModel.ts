import mongoose, { Schema } from 'mongoose';

/**
 * A trusted GraphQL document of an account: a text its frontends may run where the account's mode is
 * `enforce` (graphqlSettingsService.ts). `_id` is `<account_id>:<sha256 hex of the text>`, so that
 * registering one twice, from two processes at once, stores it once.
 */
export interface TrustedDocumentRecord {
  _id: string;
  account_id: string;
  /** SHA-256 of `body`, hex: the API's id is `sha256:` + this. */
  hash: string;
  name: string | null;
  type: 'query' | 'mutation' | 'subscription';
  body: string;
  created_at: Date;
}

const trustedDocumentSchema = new Schema<TrustedDocumentRecord>(
  {
    _id: { type: String, required: true },
    account_id: { type: String, required: true },
    hash: { type: String, required: true },
    name: { type: String, default: null },
    type: { type: String, required: true },
    body: { type: String, required: true },
    created_at: { type: Date, required: true },
  },
  { versionKey: false, collection: 'graphql_documents' },
);

// The list, newest first; a manifest's documents share their created_at, so _id breaks the tie.
trustedDocumentSchema.index({ account_id: 1, created_at: -1, _id: -1 }, { name: 'by_account_newest' });

export const TrustedDocumentModel = mongoose.model<TrustedDocumentRecord>('TrustedDocument', trustedDocumentSchema);

export const trustedDocumentKey = (accountId: string, hash: string): string => `${accountId}:${hash}`;
