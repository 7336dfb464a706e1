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
}

const WINDOW_MS = 60_000;
/** Buckets named `key:<api key id>` count in the key's own document (see countKeyRequest). */
const KEY_BUCKET_PREFIX = 'key:';

/**
 * Counts one request in `bucket`. The counter lives in the database so every gateway process shares
 * it. A window opens with the first request and lasts a minute; the count is one atomic $inc, and
 * opening a new window is guarded by a condition on the old window's end, so two processes can never
 * both start a fresh window.
 *
 * A key's requests count in the key's document (`rate_count`, `rate_window_end`), so that the REST
 * pipeline can find the key and count the request in one database round trip (countKeyRequest);
 * other buckets (client IPs) have a document of their own in `rate_limits`.
 */
export async function hitRateLimit(bucket: string, limit: number, nowMs: number = Date.now()): Promise<RateLimitDecision> {
  if (bucket.startsWith(KEY_BUCKET_PREFIX)) {
    const counted = await countKeyRequest({ _id: bucket.slice(KEY_BUCKET_PREFIX.length) }, limit, nowMs);
    // An unknown key id: nothing to count against (callers authenticate first).
    return counted?.decision ?? decide(1, nowMs + WINDOW_MS, limit, nowMs);
  }
  for (let attempt = 0; attempt < 5; attempt++) {
    const now = new Date(nowMs);
    const current = await bucketCollection().findOneAndUpdate(
      { _id: bucket, window_end: { $gt: now } },
      { $inc: { count: 1 } },
      { returnDocument: 'after' },
    );
    if (current) return decide(current.count, current.window_end.getTime(), limit, nowMs);
    try {
      const opened = await bucketCollection().findOneAndUpdate(
        { _id: bucket, window_end: { $lte: now } },
        { $set: { count: 1, window_end: new Date(nowMs + WINDOW_MS) } },
        { returnDocument: 'after', upsert: true },
      );
      if (opened) return decide(opened.count, opened.window_end.getTime(), limit, nowMs);
    } catch (err) {
      // Another request opened the window first: count in it.
      if (!isDuplicateKey(err)) throw err;
    }
  }
  throw new Error(`rate limit bucket ${bucket} is contended`);
}

/**
 * Counts one request of the (unrevoked) key matching `identity` and returns the key as it is after
 * the count, with the decision; null when no such key exists. In the usual case (window open) this is
 * a single findOneAndUpdate, which is also the key lookup of authentication.
 *
 * Requests of the same key that arrive in the same turn of the event loop are counted together, with
 * one `$inc` of their number (src/db/batching.ts): each still counts, in the database, and gets its own
 * position in the window, so the decisions are exactly those of counting them one by one.
 */
export function countKeyRequest(
  identity: { _id: string } | { key_hash: string },
  limit: number,
  nowMs: number = Date.now(),
): Promise<{ key: ApiKeyRecord; decision: RateLimitDecision } | null> {
  return keyCounts.run({ identity, limit, nowMs });
}

interface CountRequest {
  identity: { _id: string } | { key_hash: string };
  limit: number;
  nowMs: number;
}

const keyCounts = new Batcher<CountRequest, { key: ApiKeyRecord; decision: RateLimitDecision } | null>(async (requests) => {
  const groups = new Map<string, number[]>();
  requests.forEach((r, i) => {
    const k = JSON.stringify(r.identity);
    groups.set(k, [...(groups.get(k) ?? []), i]);
  });
  const out: Array<{ ok: true; value: { key: ApiKeyRecord; decision: RateLimitDecision } | null } | { ok: false; error: unknown }> = [];
  await Promise.all(
    [...groups.values()].map(async (indexes) => {
      const first = requests[indexes[0]!]!;
      try {
        const counted = await countKeyRequests(first.identity, indexes.length, first.nowMs);
        indexes.forEach((requestIndex, j) => {
          const r = requests[requestIndex]!;
          // This request's position in the window: the ones before it in the batch counted first.
          const position = counted ? counted.count - indexes.length + 1 + j : 0;
          out[requestIndex] = {
            ok: true,
            value: counted ? { key: counted.key, decision: decide(position, counted.windowEndMs, r.limit, r.nowMs) } : null,
          };
        });
      } catch (error) {
        for (const requestIndex of indexes) out[requestIndex] = { ok: false, error };
      }
    }),
  );
  return out;
});

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
  return RateLimitModel.collection as unknown as mongo.Collection<RateLimitRecord>;
}

function keyCollection(): mongo.Collection<ApiKeyRecord> {
  return ApiKeyModel.collection as unknown as mongo.Collection<ApiKeyRecord>;
}
