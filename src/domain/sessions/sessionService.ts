import { driverCollection } from '../../db/driverCollection';
import { randomBytes } from 'node:crypto';
import { ApiError } from '../../errors';
import { AccountModel, type AccountRecord } from '../accounts/accountModel';
import { ApiKeyModel, type ApiKeyRecord } from '../accounts/apiKeyModel';
import { authenticate, type AuthenticatedKey } from '../accounts/apiKeyService';
import { hashSecret } from '../accounts/secrets';
import { hitRateLimit } from '../ratelimit/rateLimitService';
import { DashboardSessionModel, type DashboardSessionRecord } from './sessionModel';
import { closeSessionSockets } from './sessionSockets';

/**
 * Dashboard sessions (contract decisions, "Sandbox dashboard"): the browser holds a random session id in
 * an HttpOnly cookie, never the key. A session acts for its key, with its own rate-limit window (the
 * dashboard never spends the key's API budget), until its key is revoked or
 * SESSION_LIFETIME_MS has passed. A credential like a key, so it lives in the domain. More:
 * docs/decisions/notes/rate-limits-and-sessions.md, "Dashboard sessions".
 */

/** 12 h, fixed by the contract decisions. */
export const SESSION_LIFETIME_MS = 12 * 3600 * 1000;

/** 32 bytes from the CSPRNG, base64url (43 characters). */
const SESSION_VALUE = /^[A-Za-z0-9_-]{43}$/;

export interface DashboardSessionResource {
  object: 'dashboard_session';
  account: { id: string; name: string };
  key: { id: string; type: ApiKeyRecord['type']; permissions: string[] };
  expires_at: string;
}

const sessions = () => driverCollection<DashboardSessionRecord>(DashboardSessionModel);
const keys = () => driverCollection<ApiKeyRecord>(ApiKeyModel);
const accounts = () => driverCollection<AccountRecord>(AccountModel);

/** The one 401 of a missing, unknown, expired or signed-out session, or one whose key was revoked. */
export const sessionRefused = () =>
  new ApiError('authentication_failed', 'No valid dashboard session: sign in again with POST /dashboard/session.');

/**
 * Signs in: the key is checked like a bearer key (401 for a wrong or revoked one). A publishable key
 * reads payment methods only, so it opens no dashboard: 403. Returns the cookie value (shown only to
 * the Set-Cookie header) and the session's public description.
 */
export async function createSession(secret: unknown): Promise<{ value: string; resource: DashboardSessionResource }> {
  const { account, key } = await authenticate(typeof secret === 'string' ? secret : undefined);
  if (key.type === 'publishable') {
    throw new ApiError('permission_denied', 'A publishable key cannot open the dashboard: sign in with a secret (sk_test_) or restricted key.');
  }
  const value = randomBytes(32).toString('base64url');
  const now = new Date();
  const record: DashboardSessionRecord = {
    _id: hashSecret(value),
    account_id: account._id,
    key_id: key._id,
    created_at: now,
    expires_at: new Date(now.getTime() + SESSION_LIFETIME_MS),
  };
  await sessions().insertOne(record);
  return { value, resource: sessionResource(record, account, key) };
}

/** The unexpired session a cookie value names, or null. The lookup is by the value's hash. */
async function findSession(value: string | undefined): Promise<DashboardSessionRecord | null> {
  if (!value || !SESSION_VALUE.test(value)) return null;
  const record = await sessions().findOne({ _id: hashSecret(value) });
  if (!record || record.expires_at.getTime() <= Date.now()) return null;
  return record;
}

/** `GET /dashboard/session`: the session with its (unrevoked) key and account, or the 401. */
export async function describeSession(value: string | undefined): Promise<DashboardSessionResource> {
  const record = await findSession(value);
  if (!record) throw sessionRefused();
  const [key, account] = await Promise.all([keys().findOne({ _id: record.key_id, revoked_at: null }), accounts().findOne({ _id: record.account_id })]);
  if (!key || !account) throw sessionRefused();
  return sessionResource(record, account, key);
}

/**
 * A request made with the session (admission's `session` credentials: GraphQL over HTTP, each
 * WebSocket operation): its key, with the request counted in the session's own window (`perMinute`,
 * DASHBOARD_RATE_LIMIT_PER_MINUTE), never in the key's or its account's: the dashboard must not spend the merchant's API budget (contract
 * decisions, "a data product"). The decision is returned, not enforced. The count and the key's read go
 * out together, after the session's lookup. 401 when the session or its key no longer works.
 */
export async function authenticateSessionAndCount(value: string | undefined, perMinute: number): Promise<SessionRequest> {
  const record = await findSession(value);
  if (!record) throw sessionRefused();
  const budget = { bucket: sessionBucket(record._id), limit: perMinute };
  const [key, rate] = await Promise.all([keys().findOne({ _id: record.key_id, revoked_at: null }), hitRateLimit(budget.bucket, perMinute)]);
  if (!key) throw sessionRefused();
  return { auth: { key, rate }, budget };
}

/** A session's request: its key (with the session's decision as `rate`) and the window it was counted in. */
export interface SessionRequest {
  auth: AuthenticatedKey;
  budget: SessionBudget;
}

/** A session's own window: its bucket and limit, apart from its key's (what admission counts a request's further operations in). */
export interface SessionBudget {
  bucket: string;
  limit: number;
}

/** The rate-limit bucket of a session (by its stored hash, never the cookie's value). */
const sessionBucket = (sessionHash: string) => `session:${sessionHash}`;

/** The (unrevoked) key a session acts for, without counting a request (WebSocket connection_init). */
export async function sessionKey(value: string | undefined): Promise<ApiKeyRecord> {
  const record = await findSession(value);
  const key = record ? await keys().findOne({ _id: record.key_id, revoked_at: null }) : null;
  if (!key) throw sessionRefused();
  return key;
}

/** Signs out: the session is gone for good, its WebSockets in this process closed. 401 when there was none to end. */
export async function deleteSession(value: string | undefined): Promise<void> {
  const record = await findSession(value);
  if (!record) throw sessionRefused();
  await sessions().deleteOne({ _id: record._id });
  closeSessionSockets(record._id);
}

/** The identity a session's sockets are tracked by (sessionSockets.ts): the stored hash, never the value. */
export const sessionSocketKey = (value: string) => hashSecret(value);

/** Revoking a key ends every session signed in with it. */
export async function deleteSessionsOfKey(keyId: string): Promise<void> {
  await sessions().deleteMany({ key_id: keyId });
}

function sessionResource(record: DashboardSessionRecord, account: AccountRecord, key: ApiKeyRecord): DashboardSessionResource {
  return {
    object: 'dashboard_session',
    account: { id: account._id, name: account.name },
    key: { id: key._id, type: key.type, permissions: key.permissions },
    expires_at: record.expires_at.toISOString(),
  };
}
