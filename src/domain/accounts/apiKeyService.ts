import { driverCollection } from '../../db/driverCollection';
import type { components } from '../../../generated/openapi';
import { ApiError } from '../../errors';
import { logger } from '../../logger';
import { createWithinCap } from '../createWithinCap';
import { AccountModel, type AccountClock, type AccountRecord } from './accountModel';
import { ApiKeyModel, type ApiKeyRecord } from './apiKeyModel';
import { keyRecord } from './accountService';
import { digestsEqual, hashSecret, newKeySecret } from './secrets';
import { keyRevoked } from './keyRevocation';
import { accountRevokedKey, countKeyAndAccountRequest, countsAtOnce, forgetKey, markKeyRevoked, pruneRevokedMarks, type RateLimitDecision, type RateLimits } from '../ratelimit/rateLimitService';

/** The contract's ApiKey (openapi.yaml, generated/openapi.ts): the serializer is held to it. */
export type ApiKeyResource = components['schemas']['ApiKey'];
/**
 * A new key's answer: the contract's ApiKeyWithSecret, which is also a whole ApiKey (`last4` included,
 * though ApiKeyWithSecret leaves it optional), as GraphQL's ApiKey needs.
 */
export type ApiKeyWithSecretResource = components['schemas']['ApiKeyWithSecret'] & ApiKeyResource;

export interface Authenticated {
  account: AccountRecord;
  key: ApiKeyRecord;
}

const KEY_SHAPE = /^(sk|pk)_test_[0-9A-Za-z]{32}$/;

// Authentication reads on every request: the driver's collections directly, which skips mongoose's
// query layer (about 15 % of the CPU of each read; bench/HISTORY.md).
const keys = () => driverCollection<ApiKeyRecord>(ApiKeyModel);
const accounts = () => driverCollection<AccountRecord>(AccountModel);

/** The one 401 of a missing, malformed, unknown or revoked key. */
export const authenticationFailed = () => new ApiError('authentication_failed', 'Invalid API key provided. Send "Authorization: Bearer sk_test_..."');

/**
 * Resolves a bearer secret to its key and account. Any failure, whatever its cause (malformed,
 * unknown, revoked, live key), is the same 401 so the answer reveals nothing about which keys exist.
 */
export async function authenticate(secret: string | undefined): Promise<Authenticated> {
  const fail = authenticationFailed;
  if (!secret || !KEY_SHAPE.test(secret)) throw fail();
  const hash = hashSecret(secret);
  const key = await keys().findOne({ key_hash: hash });
  if (!key || !digestsEqual(key.key_hash, hash) || key.revoked_at) throw fail();
  const account = await accounts().findOne({ _id: key.account_id });
  // The account's mark is a revocation's first write (markKeyRevoked): it counts even before the key's own.
  if (!account || accountRevokedKey(account, key._id)) throw fail();
  return { account, key };
}

/** A key that authenticated, and the rate-limit decision of the request it made. */
export interface AuthenticatedKey {
  key: ApiKeyRecord;
  rate: RateLimitDecision;
  /**
   * The key's account (its sandbox clock) as the request's count read it: for that request's handler
   * only (another request, or another process, may move the clock since). Absent where the key was
   * counted without it.
   */
  account?: AccountClock;
}

/**
 * The REST pipeline's first step: resolves the bearer secret to its key (same 401 rules as
 * authenticate()) and counts the request in the key's rate-limit window and its account's, in one
 * database round trip once this process knows the key's account (countKeyAndAccountRequest). The
 * decision is returned, not enforced: the caller answers 429. The count also reads the account's
 * clock, which the request's handler takes instead of reading it again.
 */
export async function authenticateAndCount(secret: string | undefined, limits: RateLimits): Promise<AuthenticatedKey> {
  if (!secret || !KEY_SHAPE.test(secret)) throw authenticationFailed();
  const hash = hashSecret(secret);
  const counted = await countKeyAndAccountRequest(hash, limits);
  if (!counted || !digestsEqual(counted.key.key_hash, hash)) throw authenticationFailed();
  return { key: counted.key, rate: counted.decision, account: counted.account };
}

/**
 * Whether authenticateAndCount, called now with this secret, sends its count in this turn for a key
 * this process knows and let through last time (countsAtOnce); false for any secret that is not such a
 * key, whatever the reason.
 */
export function countsKnownKeyAtOnce(secret: string | undefined): boolean {
  return !!secret && KEY_SHAPE.test(secret) && countsAtOnce(hashSecret(secret));
}

/**
 * A restricted key, within the account's cap of active keys (ACCOUNT_CAPS.activeApiKeys, its secret and
 * publishable keys included): over it, 400 `invalid_request` and no key. The cap holds under concurrent
 * creates (createWithinCap).
 */
export async function createRestrictedKey(
  accountId: string,
  input: { name: string; permissions: ApiKeyRecord['permissions'] },
): Promise<ApiKeyWithSecretResource> {
  const secret = newKeySecret('sk_test_');
  const permissions = [...new Set(input.permissions)].sort();
  const record = keyRecord(accountId, 'restricted', input.name, permissions, secret, new Date());
  await createWithinCap('activeApiKeys', {
    insert: () => ApiKeyModel.create(record),
    countHeld: () => ApiKeyModel.countDocuments({ account_id: accountId, revoked_at: null }),
    remove: () => ApiKeyModel.deleteOne({ _id: record._id }),
  });
  return { ...toApiKeyResource(record), type: 'restricted', name: input.name, revoked_at: null, secret };
}

/**
 * How many keys a list shows (GET /api_keys, GraphQL `apiKeys`). Revoked keys are kept for ever, so the
 * list is cut: every active key (at most ACCOUNT_CAPS.activeApiKeys), then the most recently revoked.
 */
export const API_KEY_LIST_SIZE = 50;

/** Active keys newest first, then revoked keys by revocation, newest first: API_KEY_LIST_SIZE in all. */
export async function listApiKeys(accountId: string): Promise<ApiKeyRecord[]> {
  const active = await ApiKeyModel.find({ account_id: accountId, revoked_at: null })
    .sort({ created_at: -1, _id: 1 })
    .limit(API_KEY_LIST_SIZE)
    .lean<ApiKeyRecord[]>();
  const room = API_KEY_LIST_SIZE - active.length;
  if (room <= 0) return active;
  const revoked = await ApiKeyModel.find({ account_id: accountId, revoked_at: { $ne: null } })
    .sort({ revoked_at: -1, _id: 1 })
    .limit(room)
    .lean<ApiKeyRecord[]>();
  return [...active, ...revoked];
}

/** Revoking is permanent; revoking twice returns the key as it is. */
export async function revokeApiKey(accountId: string, keyId: string): Promise<ApiKeyRecord> {
  const target = await ApiKeyModel.findOne({ _id: keyId, account_id: accountId }, { type: 1 }).lean<ApiKeyRecord>();
  if (!target) throw ApiError.notFound('api_key', keyId);
  // The full secret key is the only key that manages keys: revoking it would lock the account out.
  if (target.type === 'secret') throw ApiError.invalid("The account's full secret key cannot be revoked");
  // The account's mark first: from it on, every process refuses the key, including those that remember
  // it and no longer read it (countKeyAndAccountRequest); a crash before the key's own write leaves it
  // refused, and revoking again completes it.
  const revokedAt = new Date();
  await markKeyRevoked(accountId, keyId, revokedAt);
  const updated = await ApiKeyModel.findOneAndUpdate(
    { _id: keyId, account_id: accountId, revoked_at: null },
    { $set: { revoked_at: revokedAt } },
    { returnDocument: 'after' },
  ).lean<ApiKeyRecord>();
  // Its open WebSocket and SSE connections end now in this process (other processes notice within
  // KEY_REVOCATION_CHECK_MS, src/realtime/connections.ts), then the dashboard sessions signed in with it
  // (their sockets, identified by the key, closed first): the hooks src/server.ts registers, in that order.
  await keyRevoked(keyId);
  if (updated) forgetKey(updated.key_hash);
  // The marks of keys revoked minutes ago are no longer needed (their records refuse them): they go now,
  // so that the account's document keeps only the last few minutes' marks. A failure leaves them for the
  // next revocation: the key revoked now is refused either way.
  await pruneRevokedMarks(accountId).catch((err: unknown) => logger.warn({ err, accountId }, 'could not prune revoked-key marks'));
  if (updated) return updated;
  const existing = await ApiKeyModel.findOne({ _id: keyId, account_id: accountId }).lean<ApiKeyRecord>();
  if (!existing) throw ApiError.notFound('api_key', keyId);
  return existing;
}

export function toApiKeyResource(key: ApiKeyRecord): ApiKeyResource {
  return {
    object: 'api_key',
    id: key._id,
    type: key.type,
    name: key.name,
    permissions: key.permissions,
    last4: key.last4,
    created_at: key.created_at.toISOString(),
    revoked_at: key.revoked_at ? key.revoked_at.toISOString() : null,
  };
}

/** The length of a key's rate-limit window (rateLimitService.ts): a window opens at a request and lasts this long. */
const RATE_WINDOW_MS = 60_000;

/**
 * About when each key of the account last made a request, to the minute, for the dashboard: the start
 * of the key's latest rate-limit window (`key_rates.<key id>` in the account's document). A window
 * opens at the first request after the previous one ended, so the key's last request falls within the
 * minute after that start. It costs nothing per request (the count already writes the window) and one
 * read of the account's document per listing, rather than a write of its own on the request path.
 */
export async function keysLastUsed(accountId: string): Promise<Map<string, Date>> {
  const account = await AccountModel.findById(accountId, { key_rates: 1 }).lean<Pick<AccountRecord, 'key_rates'>>();
  const used = new Map<string, Date>();
  for (const [keyId, w] of Object.entries(account?.key_rates ?? {})) {
    const end = w?.end ? new Date(w.end).getTime() : NaN;
    if (Number.isFinite(end)) used.set(keyId, new Date(end - RATE_WINDOW_MS));
  }
  return used;
}
