import { randomUUID } from 'node:crypto';
import { ApiError, isApiError } from '../../errors';
import { randomBase62, type IdPrefix } from '../../ids';
import { logger } from '../../logger';
import { insertBatched, updateOneBatched } from '../../db/batching';
import { isDuplicateKey } from '../../db/errors';
import { bodyFingerprint, sha256Hex } from './canonicalJson';
import { IdempotencyModel, type IdempotencyRecord } from './idempotencyModel';

/**
 * Idempotency for POST /payment_intents and POST /refunds (spec and contract decisions): the same body
 * replays, another is 409, concurrent ones wait for the first, a 5xx is not stored. The one object a request
 * creates takes its id from the key's record, so a retry after a crash returns it rather than create a
 * second. More: docs/decisions/notes/events-and-payments.md, "Idempotency rules".
 */
export interface IdempotentRequest {
  accountId: string;
  method: string;
  path: string;
  key: string;
  body: unknown;
  /** Goes into the stored error body when `fn` throws a 4xx ApiError. */
  requestId: string;
}

export interface IdempotentResult {
  status: number;
  body: unknown;
  /** `body` as the JSON text that was stored (and is replayed): what REST sends, serialized once. */
  json: string;
  replayed: boolean;
}

export const IDEMPOTENCY_WAIT_MS = 10_000;
// Short lease, renewed while the request runs: a key left behind by a crashed process is free again
// within ~15 s instead of blocking retries for longer.
const LEASE_MS = 15_000;
const RENEW_EVERY_MS = 5_000;
const POLL_FIRST_MS = 25;
const POLL_MAX_MS = 250;

/**
 * Waiters in this process are woken as soon as the key's owner here finishes; waiters behind an owner
 * in another process poll, with a growing interval so that many of them do not flood the database.
 */
// eslint-disable-next-line no-restricted-syntax -- a key of the database finished by any gateway of this process wakes its waiters here
const localWaiters = new Map<string, Set<() => void>>();

function waitForChange(id: string, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const set = localWaiters.get(id) ?? new Set<() => void>();
    localWaiters.set(id, set);
    const done = () => {
      clearTimeout(timer);
      set.delete(done);
      if (set.size === 0 && localWaiters.get(id) === set) localWaiters.delete(id);
      resolve();
    };
    const timer = setTimeout(done, ms);
    set.add(done);
  });
}

/**
 * Keys whose owner in this process answered 5xx but could not store the key's release, because the
 * database refused that write too (a full disk, an outage): the record still says `in_progress` under a
 * live lease. A retry in this process takes such a key over at once, as if released, rather than wait out
 * the lease (LEASE_MS, longer than "writes again within 5 s of space coming back"); another process
 * still waits for the lease. Entries go when the lease would have ended: insertion order is expiry order.
 */
// eslint-disable-next-line no-restricted-syntax -- what this process answered 5xx for: only its own retries may act on it
const unreleasedHere = new Map<string, { owner: string; until: number }>();

function releasedHere(id: string, rec: IdempotencyRecord): boolean {
  const now = Date.now();
  for (const [key, entry] of unreleasedHere) {
    if (entry.until > now) break;
    unreleasedHere.delete(key);
  }
  return rec.state === 'in_progress' && unreleasedHere.get(id)?.owner === rec.owner;
}

function wakeWaiters(id: string): void {
  for (const wake of [...(localWaiters.get(id) ?? [])]) wake();
}
/**
 * What runIdempotent hands the request it runs (passed explicitly to the service that creates the
 * object; an AsyncLocalStorage here turned on promise hooks for the whole process, ~3 % of all CPU).
 */
export interface IdempotentAttempt {
  /**
   * The id to give the object the request creates: the prefix and 24 base62 characters drawn from the
   * CSPRNG when the key was first claimed, so a retry after a crash finds the same object.
   */
  objectId(prefix: IdPrefix): string;
  /**
   * True when this request took over a key that an earlier attempt held (its process died, or it
   * answered 5xx): the object with the reserved id may already exist and must be looked for.
   */
  resumed: boolean;
  /**
   * Work the answer waits for that may run while the answer is stored (clearing the new object's outbox,
   * which the sweeper redoes after a crash): one sequential round trip fewer. Its failure is logged, not the
   * request's. More: docs/decisions/notes/events-and-payments.md, "answerAfter".
   */
  answerAfter(work: Promise<unknown>): void;
}

interface Attempt extends IdempotentAttempt {
  /** What answerAfter was given, each already caught. */
  readonly awaited: Array<Promise<unknown>>;
}

function attemptOf(objectSuffix: string, resumed: boolean): Attempt {
  const awaited: Array<Promise<unknown>> = [];
  return {
    objectId: (prefix) => `${prefix}_${objectSuffix}`,
    resumed,
    awaited,
    answerAfter(work) {
      awaited.push(work.catch((err: unknown) => logger.warn({ err }, 'work beside an idempotent answer failed (left for its sweeper)')));
    },
  };
}

export function idempotencyScopeId(r: Pick<IdempotentRequest, 'accountId' | 'method' | 'path' | 'key'>): string {
  return sha256Hex([r.accountId, r.method.toUpperCase(), r.path, r.key].join('\u0000'));
}

const conflict = () =>
  new ApiError('idempotency_conflict', 'This Idempotency-Key was already used with a different request body. Use a new key for a new request.');

export async function runIdempotent(
  req: IdempotentRequest,
  fn: (attempt: IdempotentAttempt) => Promise<{ status: number; body: unknown }>,
): Promise<IdempotentResult> {
  const id = idempotencyScopeId(req);
  const bodyHash = bodyFingerprint(req.body);
  // How long this request waits: on the monotonic clock (a wall-clock step must not make it wait an
  // hour or not at all). The lease below is stored, read by other processes: wall time.
  const deadline = performance.now() + IDEMPOTENCY_WAIT_MS;
  let pollMs = POLL_FIRST_MS;

  for (;;) {
    const owner = randomUUID();
    const claim = await claimNew(id, req, bodyHash, owner);
    if (claim) return execute(claim, attemptOf(claim.object_suffix, false), req.requestId, fn);

    const rec = await IdempotencyModel.findById(id).lean<IdempotencyRecord>();
    if (!rec) continue;
    if (rec.state === 'released' || releasedHere(id, rec)) {
      // The last answer was a 5xx: the key is free again. Same body: keep the reserved object id.
      const objectSuffix = rec.body_hash === bodyHash ? rec.object_suffix : randomBase62(24);
      const taken = await takeOver(id, rec, { owner, body_hash: bodyHash, object_suffix: objectSuffix, state: 'in_progress' });
      if (taken) return execute({ ...rec, owner, body_hash: bodyHash, object_suffix: objectSuffix }, attemptOf(objectSuffix, true), req.requestId, fn);
      continue;
    }
    if (rec.body_hash !== bodyHash) throw conflict();
    if (rec.state === 'completed') {
      const json = rec.response_json ?? 'null';
      return { status: rec.status ?? 200, body: JSON.parse(json), json, replayed: true };
    }
    if (rec.lease_until <= Date.now()) {
      // The first request's process died: take the key over, with the same reserved object id.
      const taken = await takeOver(id, rec, { owner });
      if (taken) return execute({ ...rec, owner }, attemptOf(rec.object_suffix, true), req.requestId, fn);
      continue;
    }
    if (performance.now() >= deadline) {
      throw new ApiError('idempotency_conflict', 'A request with this Idempotency-Key is still being processed. Retry later with the same key.');
    }
    await waitForChange(id, Math.min(pollMs * (0.75 + Math.random() / 2), deadline - performance.now()));
    pollMs = Math.min(pollMs * 2, POLL_MAX_MS);
  }
}

/** Inserts the record; returns it when this request owns the key. */
async function claimNew(id: string, req: IdempotentRequest, bodyHash: string, owner: string): Promise<IdempotencyRecord | null> {
  const claim: IdempotencyRecord = {
    _id: id,
    account_id: req.accountId,
    method: req.method.toUpperCase(),
    path: req.path,
    key: req.key,
    body_hash: bodyHash,
    object_suffix: randomBase62(24),
    state: 'in_progress',
    owner,
    lease_until: Date.now() + LEASE_MS,
    status: null,
    response_json: null,
    created_at: new Date(),
    completed_at: null,
  };
  try {
    // Acknowledged once applied: the request is answered only after a durable write that follows this
    // one (its object's, or the stored answer's), whose durability implies this one's; a claim lost
    // with a crash belonged to a request that was never answered, and its retry claims the key again.
    // Should the claim alone be lost while the process lives (the journal refused it after answering),
    // the completion below stores the whole record again.
    await insertBatched(IdempotencyModel, claim, 'applied');
    return claim;
  } catch (err) {
    if (isDuplicateKey(err)) return null;
    throw err;
  }
}

/** Conditional on the record being exactly as read, so one of several contenders wins. */
async function takeOver(id: string, rec: IdempotencyRecord, set: Partial<IdempotencyRecord> & { owner: string }): Promise<boolean> {
  const taken = await IdempotencyModel.findOneAndUpdate(
    { _id: id, state: rec.state, owner: rec.owner, lease_until: rec.lease_until },
    { $set: { ...set, lease_until: Date.now() + LEASE_MS } },
    { projection: { _id: 1 }, lean: true },
  );
  return taken !== null;
}

async function execute(
  claim: IdempotencyRecord,
  attempt: Attempt,
  requestId: string,
  fn: (attempt: IdempotentAttempt) => Promise<{ status: number; body: unknown }>,
): Promise<IdempotentResult> {
  const { _id: id, owner } = claim;
  const mine = { _id: id, owner, state: 'in_progress' as const };
  const renew = setInterval(() => {
    IdempotencyModel.updateOne(mine, { $set: { lease_until: Date.now() + LEASE_MS } }).catch((err: unknown) =>
      logger.warn({ err, id }, 'could not renew idempotency lease'),
    );
  }, RENEW_EVERY_MS);
  renew.unref();

  let result: { status: number; body: unknown };
  try {
    try {
      result = await fn(attempt);
    } catch (err) {
      if (!isApiError(err) || err.status >= 500) throw err;
      result = { status: err.status, body: { error: { code: err.code, message: err.message, request_id: requestId } } };
    }
  } catch (err) {
    clearInterval(renew);
    await release(id, owner);
    throw err;
  }
  clearInterval(renew);

  const json = JSON.stringify(result.body ?? null);
  if (result.status >= 500) {
    await release(id, owner);
    return { ...result, json, replayed: false };
  }
  // Stored while the work handed to answerAfter finishes; answered once both are done.
  await Promise.all([storeAnswer(claim, result.status, json), ...attempt.awaited]);
  wakeWaiters(id);
  return { ...result, json, replayed: false };
}

/**
 * Completes the key's record, conditional on still owning it: a takeover after a lost lease keeps the
 * new owner's answer (the upsert then collides on `_id`, and that is the answer). An upsert rather than
 * an update, so that a claim the database lost after acknowledging it (its journal refused the write
 * once full, docs/decisions/notes/events-and-payments.md "Idempotency rules") is stored whole with its
 * answer: otherwise the key would look unused and its next request would create a second object.
 */
async function storeAnswer(claim: IdempotencyRecord, status: number, json: string): Promise<void> {
  const { _id, owner, state: _state, status: _status, response_json: _json, completed_at: _completed, ...rest } = claim;
  try {
    await updateOneBatched(
      IdempotencyModel,
      { _id, owner, state: 'in_progress' },
      { $set: { state: 'completed', status, response_json: json, completed_at: new Date() }, $setOnInsert: rest },
      'durable',
      true,
    );
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
}

/** A 5xx: the answer is not stored and the key is free for a retry. */
async function release(id: string, owner: string): Promise<void> {
  try {
    await IdempotencyModel.updateOne({ _id: id, owner, state: 'in_progress' as const }, { $set: { state: 'released' as const, lease_until: 0 } });
  } catch (err) {
    unreleasedHere.delete(id);
    unreleasedHere.set(id, { owner, until: Date.now() + LEASE_MS });
    logger.error({ err, id }, 'could not release idempotency key');
  }
  wakeWaiters(id);
}
