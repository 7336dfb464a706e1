import mongoose, { Schema } from 'mongoose';

/**
 * A dashboard session: what the `pgw_session` cookie stands for after a sign-in with a key. Only the
 * SHA-256 of the cookie value is stored (as `_id`, so a lookup is one hash equality on the primary
 * index); the key id names the key the session acts for, with its account and permissions.
 */
export interface DashboardSessionRecord {
  /** hex SHA-256 of the cookie value. */
  _id: string;
  account_id: string;
  key_id: string;
  created_at: Date;
  /** Real time (not the account's sandbox clock): a browser session lasts 12 h of the signed-in person's day. */
  expires_at: Date;
}

const sessionSchema = new Schema<DashboardSessionRecord>(
  {
    _id: { type: String, required: true },
    account_id: { type: String, required: true },
    key_id: { type: String, required: true },
    created_at: { type: Date, required: true },
    expires_at: { type: Date, required: true },
  },
  { versionKey: false, collection: 'dashboard_sessions' },
);

// Expired sessions are refused on read (expires_at is checked); the TTL index only prunes them.
sessionSchema.index({ expires_at: 1 }, { name: 'expired_ttl', expireAfterSeconds: 0 });
// Revoking a key deletes its sessions.
sessionSchema.index({ key_id: 1 }, { name: 'by_key' });

export const DashboardSessionModel = mongoose.model<DashboardSessionRecord>('DashboardSession', sessionSchema);
