import { driverCollection } from '../../db/driverCollection';
import type { mongo } from 'mongoose';
import { Batcher } from '../../db/batching';
import { isDuplicateKey } from '../../db/errors';
import { ApiKeyModel, type ApiKeyRecord } from '../accounts/apiKey.model';
import { RateLimitModel, type RateLimitRecord } from './rateLimit.model';

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window reopens (X-RateLimit-Reset), integer >= 0. */
  resetSeconds: number;
  /**
   * Set when another window than the one described refuses the request (the key's account over its
   * limit): Retry-After waits `resetSeconds` of it.
   */
  refusedBy?: { scope: 'account'; limit: number; resetSeconds: number };
}

const WINDOW_MS = 60_000;

/**
 * Counts one request in `bucket`. The counter lives in the database so every gateway process shares
 * it. A window opens with the first request and lasts a minute; the count is one atomic $inc, and
 * opening a new window is guarded by a condition on the old window's end, so two processes can never
 * both start a fresh window.
 *
 * Buckets (client IPs, accounts) have a document each in `rate_limits`, which its TTL index deletes a
 * little after the window ends (rateLimit.model.ts). A key's own window lives in the key's document
 * instead (countKeyRequest), so that authentication and counting are one round trip.
 */
export async function hitRateLimit(bucket: string, limit: number, nowMs: number = Date.now()): Promise<RateLimitDecision> {
  const counted = await countInBucket(bucket, 1, nowMs);
  return decide(counted.count, counted.windowEndMs, limit, nowMs);
}

/** Adds `n` requests to `bucket`'s window (opening a new one when needed); the count after them. */
async function countInBucket(bucket: string, n: number, nowMs: number): Promise<{ count: number; windowEndMs: number }> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const now = new Date(nowMs);
    const current = await bucketCollection().findOneAndUpdate(
      { _id: bucket, window_end: { $gt: now } },
      { $inc: { count: n } },
      { returnDocument: 'after' },
    );
    if (current) return { count: current.count, windowEndMs: current.window_end.getTime() };
    try {
      const opened = await bucketCollection().findOneAndUpdate(
        { _id: bucket, window_end: { $lte: now } },
        { $set: { count: n, window_end: new Date(nowMs + WINDOW_MS) } },
        { returnDocument: 'after', upsert: true },
      );
      if (opened) return { count: opened.count, windowEndMs: opened.window_end.getTime() };
    } catch (err) {
      // Another request opened the window first: count in it.
      if (!isDuplicateKey(err)) throw err;
    }
  }
  throw new Error(`rate limit bucket ${bucket} is contended`);
}

export interface RateLimits {
  /** Requests per minute of one key (RATE_LIMIT_PER_MINUTE; the X-RateLimit-* headers describe it). */
  perKey: number;
  /** Requests per minute of all of an account's keys together (RATE_LIMIT_PER_ACCOUNT_PER_MINUTE). */
  perAccount: number;
}

export const accountBucket = (accountId: string) => `account:${accountId}`;

/**
 * Counts one request of the key whose secret hashes to `keyHash` in the key's window AND in its
 * account's window (so that creating keys buys no extra requests), and returns the key with the key's
 * decision, refused as well when the account is over its limit; null when no such unrevoked key exists.
 *
 * Round trips: the account a key belongs to never changes, so once this process has seen a key it
 * knows the account and sends both counts at once (one round trip of latency, as before the account
 * limit). The first request of a key in a process learns the account from the key count, then counts
 * the account. A key revoked since it was remembered adds one request to its account's count before its
 * own count says it is gone and it is forgotten; unknown secrets never reach an account's count.
 */
export async function countKeyAndAccountRequest(
  keyHash: string,
  limits: RateLimits,
  nowMs: number = Date.now(),
): Promise<{ key: ApiKeyRecord; decision: RateLimitDecision } | null> {
  const countAccount = (accountId: string) => accountCounts.run({ group: accountId, limit: limits.perAccount, nowMs });
  const knownAccount = accountOfKey.get(keyHash);
  const [counted, early] = await Promise.all([
    countKeyRequest({ key_hash: keyHash }, limits.perKey, nowMs),
    knownAccount ? countAccount(knownAccount) : null,
  ]);
  if (!counted) {
    accountOfKey.delete(keyHash);
    return null;
  }
  if (!knownAccount) rememberAccount(keyHash, counted.key.account_id);
  const account = early ?? (await countAccount(counted.key.account_id));
  return { key: counted.key, decision: combine(counted.decision, account) };
}

/**
 * The key's decision (its X-RateLimit-* headers, as the contract describes a key's window), refused
 * as well when the account's window is over; Retry-After then waits for every window that refuses.
 */
function combine(key: RateLimitDecision, account: RateLimitDecision): RateLimitDecision {
  if (account.allowed) return key;
  const wait = Math.max(account.resetSeconds, key.allowed ? 0 : key.resetSeconds);
  return { ...key, allowed: false, refusedBy: { scope: 'account', limit: account.limit, resetSeconds: wait } };
}

/** key hash → account id of the keys this process has counted (an id never moves to another account). */
const accountOfKey = new Map<string, string>();
const ACCOUNT_OF_KEY_MAX = 50_000;

function rememberAccount(keyHash: string, accountId: string): void {
  // Insertion order: the oldest entry goes first; a forgotten key costs one sequential round trip.
  if (accountOfKey.size >= ACCOUNT_OF_KEY_MAX) accountOfKey.delete(accountOfKey.keys().next().value!);
  accountOfKey.set(keyHash, accountId);
}

/**
 * Counts one request of the (unrevoked) key matching `identity` and returns the key as it is after
 * the count, with the decision; null when no such key exists. In the usual case (window open) this is
 * a single findOneAndUpdate, which is also the key lookup of authentication.
 */
export function countKeyRequest(
  identity: { _id: string } | { key_hash: string },
  limit: number,
  nowMs: number = Date.now(),
): Promise<{ key: ApiKeyRecord; decision: RateLimitDecision } | null> {
  return keyCounts.run({ group: JSON.stringify(identity), identity, limit, nowMs });
}

interface CountRequest {
  /** Requests of the same group (key, account) are counted together. */
  group: string;
  limit: number;
  nowMs: number;
}

type Counted = { count: number; windowEndMs: number };
type Outcome<O> = { ok: true; value: O } | { ok: false; error: unknown };

/**
 * Requests of the same group that arrive in the same turn of the event loop are counted together, with
 * one `$inc` of their number (src/db/batching.ts): each still counts, in the database, and gets its own
 * position in the window, so the decisions are exactly those of counting them one by one.
 */
function groupedCounter<R extends CountRequest, C extends Counted, O>(
  countN: (first: R, n: number) => Promise<C | null>,
  answer: (counted: C | null, decision: RateLimitDecision) => O,
): Batcher<R, O> {
  return new Batcher<R, O>(async (requests) => {
    const groups = new Map<string, number[]>();
    requests.forEach((r, i) => groups.set(r.group, [...(groups.get(r.group) ?? []), i]));
    const out: Array<Outcome<O>> = [];
    await Promise.all(
      [...groups.values()].map(async (indexes) => {
        try {
          const counted = await countN(requests[indexes[0]!]!, indexes.length);
          indexes.forEach((requestIndex, j) => {
            const r = requests[requestIndex]!;
            // This request's position in the window: the ones before it in the batch counted first.
            const position = counted ? counted.count - indexes.length + 1 + j : 0;
            out[requestIndex] = { ok: true, value: answer(counted, decide(position, counted?.windowEndMs ?? 0, r.limit, r.nowMs)) };
          });
        } catch (error) {
          for (const requestIndex of indexes) out[requestIndex] = { ok: false, error };
        }
      }),
    );
    return out;
  });
}

const keyCounts = groupedCounter(
  (r: CountRequest & { identity: { _id: string } | { key_hash: string } }, n) => countKeyRequests(r.identity, n, r.nowMs),
  (counted, decision) => (counted ? { key: counted.key, decision } : null),
);

const accountCounts = groupedCounter(
  (r: CountRequest, n) => countInBucket(accountBucket(r.group), n, r.nowMs),
  (_counted, decision) => decision,
);

/** Adds `n` requests to the key's window (opening a new one when needed); the count after them. */
async function countKeyRequests(
  identity: { _id: string } | { key_hash: string },
  n: number,
  nowMs: number,
): Promise<{ key: ApiKeyRecord; count: number; windowEndMs: number } | null> {
  const keys = keyCollection();
  const filter = { ...identity, revoked_at: null };
  const now = new Date(nowMs);
  for (let attempt = 0; attempt < 5; attempt++) {
    const counted =
      (await keys.findOneAndUpdate({ ...filter, rate_window_end: { $gt: now } }, { $inc: { rate_count: n } }, { returnDocument: 'after' })) ??
      // No open window (first request, or the last one ended): open one. `null` also matches a key
      // that has never been counted.
      (await keys.findOneAndUpdate(
        { ...filter, $or: [{ rate_window_end: null }, { rate_window_end: { $lte: now } }] },
        { $set: { rate_count: n, rate_window_end: new Date(nowMs + WINDOW_MS) } },
        { returnDocument: 'after' },
      ));
    if (counted) {
      return { key: counted, count: counted.rate_count ?? n, windowEndMs: (counted.rate_window_end ?? now).getTime() };
    }
    // Neither matched: the key does not exist (or is revoked), or another request opened the window
    // between the two updates, in which case the next attempt counts in it.
    if (!(await keys.findOne(filter, { projection: { _id: 1 } }))) return null;
  }
  throw new Error('rate limit of an API key is contended');
}

/**
 * Counts one request in `bucket` in this process's memory only, with the same window rule. For the
 * few answers that must not wait on the database: maintenance refusals (the database may be what is
 * under maintenance) and per-IP counts whose database update failed. Expired windows are dropped as
 * the map grows.
 */
export function hitLocalRateLimit(bucket: string, limit: number, nowMs: number = Date.now()): RateLimitDecision {
  if (localWindows.size >= LOCAL_PRUNE_AT) {
    for (const [b, w] of localWindows) if (w.windowEndMs <= nowMs) localWindows.delete(b);
  }
  let w = localWindows.get(bucket);
  if (!w || w.windowEndMs <= nowMs) localWindows.set(bucket, (w = { count: 0, windowEndMs: nowMs + WINDOW_MS }));
  w.count += 1;
  return decide(w.count, w.windowEndMs, limit, nowMs);
}

const LOCAL_PRUNE_AT = 10_000;
const localWindows = new Map<string, { count: number; windowEndMs: number }>();

function decide(count: number, windowEndMs: number, limit: number, nowMs: number): RateLimitDecision {
  return {
    allowed: count <= limit,
    limit,
    remaining: Math.max(0, limit - count),
    resetSeconds: Math.max(0, Math.ceil((windowEndMs - nowMs) / 1000)),
  };
}

// The driver's collections directly: these updates run on every request, and skipping mongoose's
// query layer saves about 15 % of the CPU of each (bench/README.md).
function bucketCollection(): mongo.Collection<RateLimitRecord> {
  return driverCollection<RateLimitRecord>(RateLimitModel);
}

function keyCollection(): mongo.Collection<ApiKeyRecord> {
  return driverCollection<ApiKeyRecord>(ApiKeyModel);
}
