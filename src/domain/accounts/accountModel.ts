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
  /**
   * The rate-limit windows of the account's keys together and of each key (domain/ratelimit): requests
   * counted so far and when the window ends. In the account's document so that one command counts a
   * request in both and reads the account's clock for it.
   */
  rate_count?: number;
  rate_window_end?: Date | null;
  /** The window's end on the monotonic clock of the machine that opened it (src/domain/ratelimit/rateLimitService.ts). */
  rate_window_clock?: string | null;
  rate_window_mono_end?: number | null;
  key_rates?: Record<string, { count: number; end: Date; clock?: string; mono_end?: number }>;
  /**
   * Key id -> when it was revoked, for every revoked key of the account. Each request's count reads its
   * key's entry (domain/ratelimit), so a process that remembers a key (and no longer reads it) still
   * refuses it from the moment it is revoked. Written before the key's own `revoked_at`.
   */
  revoked_keys?: Record<string, Date>;
  /**
   * Bumped after every change to the account's webhook endpoints (domain/webhooks/endpointCache.ts):
   * read with the clock on the delivery path, it says whether endpoints a process remembers are current.
   */
  endpoints_version?: number;
  /**
   * The trusted-documents mode of each credential kind that set one (src/domain/graphqlDocuments); the
   * kinds left out have their default.
   */
  graphql_trusted_documents?: Partial<Record<'secret_key' | 'restricted_key' | 'client_token' | 'dashboard', 'off' | 'audit' | 'enforce'>>;
}

/**
 * The account fields a request's work reads on hot paths: its sandbox clock, the entity of its
 * references, and (GraphQL) its trusted-documents modes. A key's count reads them in the same command.
 */
export type AccountClock = Pick<AccountRecord, '_id' | 'clock_offset_ms' | 'reference_entity' | 'graphql_trusted_documents'>;

const accountSchema = new Schema<AccountRecord>(
  {
    _id: { type: String, required: true },
    name: { type: String, required: true },
    email: { type: String, default: null },
    reference_entity: { type: String, required: true },
    clock_offset_ms: { type: Number, required: true, default: 0 },
    created_at: { type: Date, required: true },
    rate_count: { type: Number },
    rate_window_end: { type: Date },
    rate_window_clock: { type: String },
    rate_window_mono_end: { type: Number },
    // Key id -> { count, end }: written by the driver only (rateLimitService.ts).
    key_rates: { type: Schema.Types.Mixed },
    // Key id -> revocation time: written by the driver only (rateLimitService.ts).
    revoked_keys: { type: Schema.Types.Mixed },
    endpoints_version: { type: Number },
    graphql_trusted_documents: { type: Schema.Types.Mixed },
  },
  { versionKey: false, collection: 'accounts' },
);

export const AccountModel = mongoose.model<AccountRecord>('Account', accountSchema);
