import { driverCollection } from '../../db/driverCollection';
import type { mongo } from 'mongoose';
import { findByFieldBatched } from '../../db/batching';
import { isDuplicateKey } from '../../db/errors';
import { isDiskFull } from '../../db/unavailable';
import { APPLIED_WRITE_CONCERN } from '../../db/writeConcern';
import { AccountModel, type AccountClock, type AccountRecord } from '../accounts/accountModel';
import { ApiKeyModel, type ApiKeyRecord } from '../accounts/apiKeyModel';
import { RateLimitModel, type RateLimitRecord } from './rateLimitModel';
import { groupedCounter } from './countBatch';
import { MACHINE_CLOCK, machineBase } from '../../platform/clock/machineClock';

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
 * Window ends and steps of the wall clock: a window's end is stored in wall time (`end`, for the TTL index
 * and other machines) and on the monotonic clock of the machine that opened it (`mono_end`, `clock`). That
 * machine judges it by the monotonic end, so that a step neither keeps the window open for an hour nor ends
 * it at once. More: docs/decisions/notes/rate-limits-and-sessions.md, "Window ends and clock steps".
 */
interface WindowClock {
  now: Date;
  mono: number;
  base: number;
}

function windowClock(nowMs: number): WindowClock {
  const base = machineBase();
  return { now: new Date(nowMs), mono: nowMs - base, base };
}

/** The fields of one stored window: its wall end, the machine whose monotonic clock `mono` is on, and its end on it. */
interface WindowFields {
  end: string;
  clock: string;
  mono: string;
}

const fieldsUnder = (prefix: string): WindowFields => ({ end: `${prefix}.end`, clock: `${prefix}.clock`, mono: `${prefix}.mono_end` });
const ACCOUNT_WINDOW: WindowFields = { end: 'rate_window_end', clock: 'rate_window_clock', mono: 'rate_window_mono_end' };
const BUCKET_WINDOW: WindowFields = { end: 'window_end', clock: 'window_clock', mono: 'window_mono_end' };

/** Filter: the window is open at `t`. */
function windowOpen(f: WindowFields, t: WindowClock): Record<string, unknown> {
  return { $or: [{ [f.clock]: MACHINE_CLOCK, [f.mono]: { $gt: t.mono } }, { [f.clock]: { $ne: MACHINE_CLOCK }, [f.end]: { $gt: t.now } }] };
}

/** Filter: the window has ended at `t`, or was never opened. */
function windowEnded(f: WindowFields, t: WindowClock): Record<string, unknown> {
  return {
    $or: [{ [f.end]: null }, { [f.clock]: MACHINE_CLOCK, [f.mono]: { $lte: t.mono } }, { [f.clock]: { $ne: MACHINE_CLOCK }, [f.end]: { $lte: t.now } }],
  };
}

/** A new window's fields, opened at `t`. */
function newWindow(t: WindowClock): { end: Date; clock: string; mono_end: number } {
  return { end: new Date(t.now.getTime() + WINDOW_MS), clock: MACHINE_CLOCK, mono_end: t.mono + WINDOW_MS };
}

/** A stored window's end in today's wall time (on this machine: its monotonic end on today's base). */
function realEndMs(w: { end: Date; clock?: string | null; mono_end?: number | null } | null | undefined, t: WindowClock): number {
  if (!w) return t.now.getTime();
  if (w.clock === MACHINE_CLOCK && typeof w.mono_end === 'number') return w.mono_end + t.base;
  return w.end.getTime();
}

/**
 * Counts one request in `bucket`, in the database so that every gateway process shares the count: one
 * atomic $inc, and a new window is opened only on a condition on the old one's end, so two processes never
 * both open one. More: docs/decisions/notes/rate-limits-and-sessions.md, "hitRateLimit".
 */
export async function hitRateLimit(bucket: string, limit: number, nowMs: number = Date.now()): Promise<RateLimitDecision> {
  const counted = await countInBucket(bucket, 1, nowMs);
  return decide(counted.count, counted.windowEndMs, limit, nowMs);
}

/**
 * While the embedded engine's disk is full it refuses every write, counts included, and still serves
 * reads (contract decisions, "When the database or the disk fails"): meanwhile a request is counted in
 * this process's memory (countLocally), with the same window rule, so that a read is not refused for
 * its count's sake.
 */
async function orInMemory<T>(stored: () => Promise<T>, inMemory: () => T | Promise<T>): Promise<T> {
  try {
    return await stored();
  } catch (err) {
    if (!isDiskFull(err)) throw err;
    return inMemory();
  }
}

/** Adds `n` requests to `bucket`'s window (opening a new one when needed); the count after them. */
function countInBucket(bucket: string, n: number, nowMs: number): Promise<{ count: number; windowEndMs: number }> {
  return orInMemory(() => countInStoredBucket(bucket, n, nowMs), () => countLocally(bucket, n, nowMs));
}

async function countInStoredBucket(bucket: string, n: number, nowMs: number): Promise<{ count: number; windowEndMs: number }> {
  const t = windowClock(nowMs);
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = await bucketCollection().findOneAndUpdate(
      { _id: bucket, ...windowOpen(BUCKET_WINDOW, t) },
      { $inc: { count: n } },
      // A count lost with a crash or a failover lets a request or so more through: acknowledged once applied.
      { returnDocument: 'after', writeConcern: APPLIED_WRITE_CONCERN },
    );
    if (current) return { count: current.count, windowEndMs: realEndMs(bucketWindow(current), t) };
    try {
      const w = newWindow(t);
      const opened = await bucketCollection().findOneAndUpdate(
        { _id: bucket, ...windowEnded(BUCKET_WINDOW, t) },
        { $set: { count: n, window_end: w.end, window_clock: w.clock, window_mono_end: w.mono_end } },
        { returnDocument: 'after', upsert: true },
      );
      if (opened) return { count: opened.count, windowEndMs: realEndMs(bucketWindow(opened), t) };
    } catch (err) {
      // Another request opened the window first: count in it.
      if (!isDuplicateKey(err)) throw err;
    }
  }
  throw new Error(`rate limit bucket ${bucket} is contended`);
}

function bucketWindow(d: RateLimitRecord): { end: Date; clock?: string | null; mono_end?: number | null } {
  return { end: d.window_end, clock: d.window_clock, mono_end: d.window_mono_end };
}

export interface RateLimits {
  /** Requests per minute of one key (RATE_LIMIT_PER_MINUTE; the X-RateLimit-* headers describe it). */
  perKey: number;
  /** Requests per minute of all of an account's keys together (RATE_LIMIT_PER_ACCOUNT_PER_MINUTE). */
  perAccount: number;
}

/** A key's request, counted: the key, its decision, and its account's clock as the count read it. */
export interface CountedKeyRequest {
  key: ApiKeyRecord;
  decision: RateLimitDecision;
  /**
   * The account as it was when this request was counted (its sandbox clock offset and reference
   * entity): this request's own read, for its handler, never kept for another request.
   */
  account: AccountClock;
}

/**
 * Counts one request of the key whose secret hashes to `keyHash` in the key's window and in its account's
 * (so that creating keys buys no extra requests); the key with its decision, refused as well when the
 * account is over its limit, or null when no such unrevoked key exists. Both windows and the revocation
 * mark are in the account's document: a key this process has read costs one command per request, and a
 * revoked key is refused by its first count. More: docs/decisions/notes/rate-limits-and-sessions.md,
 * "countKeyAndAccountRequest".
 */
export async function countKeyAndAccountRequest(
  keyHash: string,
  limits: RateLimits,
  nowMs: number = Date.now(),
): Promise<CountedKeyRequest | null> {
  const count = (k: KnownKey) => requestCounts.run({ group: `${k.accountId}\u0000${k.keyId}`, keyId: k.keyId, accountId: k.accountId, limits, nowMs });
  let known = keyOfHash.get(keyHash);
  // The age of what this process read: on the monotonic clock (machineClock.ts), not moved by a step.
  const monoNow = nowMs - machineBase();
  if (known && !fresh(known, monoNow)) {
    keyOfHash.delete(keyHash);
    known = undefined;
  }
  if (!known) {
    const found = await findByFieldBatched<ApiKeyRecord>(ApiKeyModel, 'key_hash', keyHash);
    const key = found.find((k) => k.revoked_at === null || k.revoked_at === undefined);
    if (!key) return null;
    known = { keyId: key._id, accountId: key.account_id, key, readAtMs: monoNow, refused: false };
  }
  const counted = await count(known);
  // A key whose account is not there does not work (accounts are never deleted).
  if (!counted || counted.revoked) {
    keyOfHash.delete(keyHash);
    return null;
  }
  if (!keyOfHash.has(keyHash)) rememberKey(keyHash, known);
  known.refused = !counted.decision.allowed;
  return { key: known.key, account: counted.account, decision: counted.decision };
}

/**
 * Whether countKeyAndAccountRequest, called now for this key, sends its count in this very turn (the
 * key is one this process has read, within KEY_RECHECK_MS) and that key's last count here let it
 * through: for a caller that sends the request's next read in that turn, so that it shares the count's
 * round trip (src/db/batching.ts sends what a turn queued together). False for a key not read yet (an
 * unknown secret must read nothing more) and for one refused (429) last time.
 */
export function countsAtOnce(keyHash: string, nowMs: number = Date.now()): boolean {
  const known = keyOfHash.get(keyHash);
  return known !== undefined && !known.refused && fresh(known, nowMs - machineBase());
}

/** What this process read of the key is recent enough to go on with (KEY_RECHECK_MS). */
function fresh(known: KnownKey, monoNow: number): boolean {
  return monoNow - known.readAtMs < KEY_RECHECK_MS;
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

interface KnownKey {
  keyId: string;
  accountId: string;
  /** As read when it was unrevoked; only `revoked_at` ever changes, and the account's count says that. */
  key: ApiKeyRecord;
  /** When this process read the key's record (ms, monotonic clock), for KEY_RECHECK_MS. */
  readAtMs: number;
  /** Whether its last count here refused it (429): a refused key's requests read nothing beside their count (countsAtOnce). */
  refused: boolean;
}

/**
 * How long this process goes on with a key's record it has read before reading it again (at the key's
 * next request: one `find` every few minutes per key in use). It bounds how long a revocation needs the
 * account's mark: once every process has read a revoked key's record again, the record refuses the key
 * by itself, and the mark can go (pruneRevokedMarks).
 */
export const KEY_RECHECK_MS = 5 * 60_000;

/** key hash → the keys this process has counted. */
// eslint-disable-next-line no-restricted-syntax -- what this process read of the database's keys: its recheck rule (KEY_RECHECK_MS) is per process
const keyOfHash = new Map<string, KnownKey>();
const KEY_OF_HASH_MAX = 50_000;

/** This process revoked the key: it reads the key's record again at its next request. */
export function forgetKey(keyHash: string): void {
  keyOfHash.delete(keyHash);
}

function rememberKey(keyHash: string, ids: KnownKey): void {
  // Insertion order: the oldest entry goes first; a forgotten key costs one sequential round trip.
  if (keyOfHash.size >= KEY_OF_HASH_MAX) keyOfHash.delete(keyOfHash.keys().next().value!);
  keyOfHash.set(keyHash, ids);
}

type KeyRequest = Omit<KnownKey, 'key' | 'readAtMs' | 'refused'> & { group: string; limits: RateLimits; nowMs: number };

/**
 * A key's requests, counted in groups per turn (countBatch.ts); each is decided by the rules here
 * (decide, combine) on its group's count less the `after` of its group counted after it.
 */
const requestCounts = groupedCounter(
  (r: KeyRequest, n) => countOnAccount(r.accountId, r.keyId, n, r.nowMs),
  (counted, r, after): (Omit<CountedKeyRequest, 'key'> & { revoked: boolean }) | null =>
    counted && {
      account: counted.account,
      revoked: counted.revoked,
      decision: combine(
        decide(counted.keyCount - after, counted.keyWindowEndMs, r.limits.perKey, r.nowMs),
        decide(counted.accountCount - after, counted.accountWindowEndMs, r.limits.perAccount, r.nowMs),
      ),
    },
);

/**
 * Adds `n` requests to the key's window and to its account's, both in the account's document, opening
 * either when it has ended (or was never opened); the counts after them, the account's clock and whether
 * the key is revoked. Null when the account does not exist.
 */
function countOnAccount(accountId: string, keyId: string, n: number, nowMs: number): Promise<AccountCount | null> {
  return orInMemory(
    () => countOnStoredAccount(accountId, keyId, n, nowMs),
    async () => {
      const doc = await accountCollection().findOne({ _id: accountId }, { projection: accountCountProjection(keyId) });
      if (!doc) return null;
      const key = countLocally(`key:${accountId}:${keyId}`, n, nowMs);
      const account = countLocally(`account:${accountId}`, n, nowMs);
      return {
        account: accountClockOf(doc),
        revoked: accountRevokedKey(doc, keyId),
        keyCount: key.count,
        keyWindowEndMs: key.windowEndMs,
        accountCount: account.count,
        accountWindowEndMs: account.windowEndMs,
      };
    },
  );
}

interface AccountCount {
  account: AccountClock;
  revoked: boolean;
  keyCount: number;
  keyWindowEndMs: number;
  accountCount: number;
  accountWindowEndMs: number;
}

/** What a key's count reads of its account: the account's clock and settings, both windows, the key's revocation mark. */
function accountCountProjection(keyId: string): Record<string, 1> {
  return {
    clock_offset_ms: 1,
    reference_entity: 1,
    graphql_trusted_documents: 1,
    rate_count: 1,
    rate_window_end: 1,
    rate_window_clock: 1,
    rate_window_mono_end: 1,
    [`key_rates.${keyId}`]: 1,
    [`revoked_keys.${keyId}`]: 1,
  };
}

function accountClockOf(doc: Pick<AccountRecord, '_id' | 'clock_offset_ms' | 'reference_entity' | 'graphql_trusted_documents'>): AccountClock {
  return { _id: doc._id, clock_offset_ms: doc.clock_offset_ms, reference_entity: doc.reference_entity, graphql_trusted_documents: doc.graphql_trusted_documents };
}

async function countOnStoredAccount(accountId: string, keyId: string, n: number, nowMs: number): Promise<AccountCount | null> {
  const accounts = accountCollection();
  const t = windowClock(nowMs);
  const keyField = `key_rates.${keyId}`;
  const keyWindowFields = fieldsUnder(keyField);
  for (let attempt = 0; attempt < 5; attempt++) {
    const doc = await accounts.findOneAndUpdate(
      { _id: accountId, $and: [windowOpen(ACCOUNT_WINDOW, t), windowOpen(keyWindowFields, t)] },
      { $inc: { rate_count: n, [`${keyField}.count`]: n } },
      {
        returnDocument: 'after',
        projection: accountCountProjection(keyId),
        // Every request's first write: it does not wait for a journal commit. A count lost with a crash
        // or a failover lets a few requests more through; what it reads (the revocation mark) is durable.
        writeConcern: APPLIED_WRITE_CONCERN,
      },
    );
    const keyWindow = doc?.key_rates?.[keyId];
    if (doc && keyWindow) {
      return {
        account: accountClockOf(doc),
        revoked: accountRevokedKey(doc, keyId),
        keyCount: keyWindow.count,
        keyWindowEndMs: realEndMs(keyWindow, t),
        accountCount: doc.rate_count ?? n,
        accountWindowEndMs: realEndMs(
          doc.rate_window_end ? { end: doc.rate_window_end, clock: doc.rate_window_clock, mono_end: doc.rate_window_mono_end } : null,
          t,
        ),
      };
    }
    // A window has ended, or was never opened (the account's first request, the key's first): open it
    // at zero, conditional on its end so that two processes never both do, then count again. This
    // happens about once a minute per key.
    const w = newWindow(t);
    const opened = await accounts.bulkWrite(
      [
        {
          updateOne: {
            filter: { _id: accountId, ...windowEnded(ACCOUNT_WINDOW, t) },
            update: { $set: { rate_count: 0, rate_window_end: w.end, rate_window_clock: w.clock, rate_window_mono_end: w.mono_end } },
          },
        },
        { updateOne: { filter: { _id: accountId, ...windowEnded(keyWindowFields, t) }, update: { $set: { [keyField]: { count: 0, ...w } } } } },
      ],
      { ordered: false },
    );
    if (opened.matchedCount === 0 && !(await accounts.findOne({ _id: accountId }, { projection: { _id: 1 } }))) return null;
  }
  throw new Error('rate limit of an API key is contended');
}

/** Whether the account's document marks the key revoked (markKeyRevoked): then the key is refused, whatever the key's own record says. */
export function accountRevokedKey(account: Pick<AccountRecord, 'revoked_keys'>, keyId: string): boolean {
  return Boolean(account.revoked_keys?.[keyId]);
}

/**
 * Revokes a key in its account's document: every count from now on, in any process, refuses it
 * (countKeyAndAccountRequest), and its window is dropped (it will never count again). The first write of
 * a revocation, before the key's own `revoked_at`: a crash between the two leaves the key refused.
 */
export async function markKeyRevoked(accountId: string, keyId: string, at: Date): Promise<void> {
  await accountCollection().updateOne(
    { _id: accountId },
    { $set: { [`revoked_keys.${keyId}`]: at }, $unset: { [`key_rates.${keyId}`]: '' } },
  );
}

/**
 * How long a revocation's mark stays in its account's document: KEY_RECHECK_MS, after which no process
 * goes on with the key's record as it read it before the revocation, and a minute more for a request
 * that was already under way then.
 */
export const REVOKED_MARK_KEPT_MS = KEY_RECHECK_MS + 60_000;

/**
 * Drops the account's revocation marks older than REVOKED_MARK_KEPT_MS whose key's own record says
 * revoked (a mark whose key's write never happened, a crash between the two, is kept: it alone refuses
 * the key), with the rate-limit windows those keys left behind (a process that still knew a key counted
 * it once more after its mark). Returns how many went.
 * Why: the marks live in the account's document, which every request of the account reads and writes
 * whole; kept for ever, a client revoking keys in a loop would grow it without bound, and every request
 * with it (figures: bench/README.md, "Round 14", revocation marks).
 */
export async function pruneRevokedMarks(accountId: string, nowMs: number = Date.now()): Promise<number> {
  const accounts = accountCollection();
  const account = await accounts.findOne({ _id: accountId }, { projection: { revoked_keys: 1 } });
  const old = Object.entries(account?.revoked_keys ?? {})
    .filter(([, at]) => new Date(at).getTime() <= nowMs - REVOKED_MARK_KEPT_MS)
    .map(([keyId]) => keyId);
  if (old.length === 0) return 0;
  const revoked = await driverCollection<ApiKeyRecord>(ApiKeyModel)
    .find({ _id: { $in: old }, account_id: accountId, revoked_at: { $ne: null } }, { projection: { _id: 1 } })
    .toArray();
  if (revoked.length === 0) return 0;
  const unset: Record<string, ''> = {};
  for (const k of revoked) unset[`revoked_keys.${k._id}`] = unset[`key_rates.${k._id}`] = '';
  await accounts.updateOne({ _id: accountId }, { $unset: unset });
  return revoked.length;
}

/**
 * Counts one request in `bucket` in this process's memory only, with the same window rule. For the
 * few answers that must not wait on the database: maintenance refusals (the database may be what is
 * under maintenance) and per-IP counts whose database update failed. Expired windows are dropped as
 * time passes, and at most LOCAL_WINDOWS_MAX are held.
 */
export function hitLocalRateLimit(bucket: string, limit: number, nowMs: number = Date.now()): RateLimitDecision {
  const counted = countLocally(bucket, 1, nowMs);
  return decide(counted.count, counted.windowEndMs, limit, nowMs);
}

/** Adds `n` requests to `bucket`'s window in this process's memory; the count after them. */
function countLocally(bucket: string, n: number, nowMs: number): { count: number; windowEndMs: number } {
  // In this process's memory: the window's end on the monotonic clock, which a wall-clock step does not move.
  const base = machineBase();
  const mono = nowMs - base;
  // The map is in the order the windows end (a new window is inserted last), so expired ones are at its
  // front: dropping them costs nothing per request, however many addresses are counted.
  for (const [b, w] of localWindows) {
    if (w.monoEnd > mono) break;
    localWindows.delete(b);
  }
  let w = localWindows.get(bucket);
  if (!w || w.monoEnd <= mono) {
    localWindows.delete(bucket);
    // Keyed by client address before any key is checked: over the cap, the window closest to its end goes.
    if (localWindows.size >= LOCAL_WINDOWS_MAX) localWindows.delete(localWindows.keys().next().value!);
    localWindows.set(bucket, (w = { count: 0, monoEnd: mono + WINDOW_MS }));
  }
  w.count += n;
  return { count: w.count, windowEndMs: w.monoEnd + base };
}

/**
 * Windows counted in this process's memory at most (docs/operations.md, "Bounds"): a bucket's name is
 * under 80 bytes (`ip:<kind>:<address>`), so about 2 MB in all. Past it, the oldest window is forgotten
 * (that address's next request opens a new one), which only this fallback path can notice.
 */
export const LOCAL_WINDOWS_MAX = 10_000;
// eslint-disable-next-line no-restricted-syntax -- this process's memory is the limit's scope: a client's requests to any of its gateways count together
const localWindows = new Map<string, { count: number; monoEnd: number }>();

/** How many windows hitLocalRateLimit holds (tests of its bound). */
export function localWindowCount(): number {
  return localWindows.size;
}

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

function accountCollection(): mongo.Collection<AccountRecord> {
  return driverCollection<AccountRecord>(AccountModel);
}
