import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { newId } from '../../ids';
import { logger } from '../../logger';
import { accountOffsetMs } from '../../domain/clock/clock';
import { sha256Hex } from '../../domain/idempotency/canonicalJson';
import { isDuplicateKey } from '../../domain/events/sequence';
import { TimerModel, type TimerRecord } from './timer.model';

/**
 * Durable timers in MongoDB (see README.md in this folder for why not a library).
 *
 * - scheduleTimer() stores a timer; it survives restarts.
 * - Every gateway process polls for due timers and claims each with one findOneAndUpdate that sets a
 *   lease; only the claimant runs it, so a timer fires once however many processes share the database.
 *   A process that dies mid-handler loses its lease, and another process runs the timer again.
 * - A handler that throws is retried with backoff. Handlers must therefore be idempotent; in practice
 *   they are conditional state transitions that do nothing when the state has already moved on.
 * - Sandbox clock: timers keep their due time in account time; advancing an account's clock runs its
 *   timers due in the span right away (runDueTimersForAccount) and shifts the others (shiftAccountTimers).
 */
export interface Timer {
  id: string;
  accountId: string | null;
  kind: string;
  refId: string;
  payload: Record<string, unknown>;
  /** When it was due, in account time. */
  dueAt: Date;
  /** 1 on the first run, more on retries. */
  attempts: number;
}

export interface TimerContext {
  /**
   * The handler's "now" in account time: the due time during a sandbox clock advance, otherwise the
   * later of the due time and the account's clock. Use it for timestamps and to schedule follow-ups.
   */
  now: Date;
  /** True when fired by a sandbox clock advance. */
  advancing: boolean;
}

export type TimerHandler = (timer: Timer, ctx: TimerContext) => Promise<void>;

export interface ScheduleTimerInput {
  accountId: string | null;
  kind: string;
  refId: string;
  /** Due time in the account's time (sandbox clock). */
  dueAt: Date;
  payload?: Record<string, unknown>;
  /**
   * Makes scheduling idempotent: a second schedule with the same (account, kind, dedupeKey) is a no-op,
   * even after the first has fired or been cancelled.
   */
  dedupeKey?: string;
}

const handlers = new Map<string, TimerHandler>();

const LEASE_MS = 30_000;
const MAX_ATTEMPTS = 25;
const FAST_PATH_WINDOW_MS = 60_000;
const PROCESS_ID = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

export function registerTimerHandler(kind: string, handler: TimerHandler): void {
  handlers.set(kind, handler);
}

export function timerProcessId(): string {
  return PROCESS_ID;
}

export function dedupeTimerId(accountId: string | null, kind: string, dedupeKey: string): string {
  return `tmr_${sha256Hex([accountId ?? '', kind, dedupeKey].join('\u0000')).slice(0, 40)}`;
}

export async function scheduleTimer(input: ScheduleTimerInput): Promise<{ id: string; created: boolean }> {
  const id = input.dedupeKey ? dedupeTimerId(input.accountId, input.kind, input.dedupeKey) : newId('tmr');
  const offset = input.accountId ? await accountOffsetMs(input.accountId) : 0;
  const fireAt = input.dueAt.getTime() - offset;
  try {
    await TimerModel.create({
      _id: id,
      account_id: input.accountId,
      kind: input.kind,
      ref_id: input.refId,
      payload: input.payload ?? {},
      due_at: input.dueAt,
      fire_at: fireAt,
      offset_ms: offset,
      state: 'scheduled',
      lease_owner: null,
      lease_until: 0,
      attempts: 0,
      last_error: null,
      fired_by: null,
      created_at: new Date(),
      done_at: null,
    });
  } catch (err) {
    if (isDuplicateKey(err)) return { id, created: false };
    throw err;
  }
  let effectiveFireAt = fireAt;
  if (input.accountId) {
    // A clock advance may have moved the offset between our read and our insert, after it shifted the
    // account's timers: fix ours (conditional on the offset we used, so it is shifted exactly once).
    const now = await accountOffsetMs(input.accountId);
    if (now !== offset) {
      await TimerModel.updateOne(
        { _id: id, state: 'scheduled', offset_ms: offset },
        { $inc: { fire_at: offset - now }, $set: { offset_ms: now } },
      );
      effectiveFireAt = fireAt + offset - now;
    }
  }
  armFastPath(effectiveFireAt);
  return { id, created: true };
}

/** Cancels scheduled (not yet running) timers of a reference. Returns how many. */
export async function cancelTimers(filter: { accountId?: string; kind?: string; refId: string }): Promise<number> {
  const q: Record<string, unknown> = { ref_id: filter.refId, state: 'scheduled' };
  if (filter.accountId) q.account_id = filter.accountId;
  if (filter.kind) q.kind = filter.kind;
  const res = await TimerModel.updateMany(q, { $set: { state: 'cancelled', done_at: new Date() } });
  return res.modifiedCount;
}

function toTimer(r: TimerRecord): Timer {
  return {
    id: r._id,
    accountId: r.account_id,
    kind: r.kind,
    refId: r.ref_id,
    payload: r.payload ?? {},
    dueAt: new Date(r.due_at),
    attempts: r.attempts,
  };
}

async function claim(filter: Record<string, unknown>, sort: Record<string, 1 | -1>): Promise<TimerRecord | null> {
  const now = Date.now();
  return TimerModel.findOneAndUpdate(
    filter,
    { $set: { state: 'running', lease_owner: PROCESS_ID, lease_until: now + LEASE_MS }, $inc: { attempts: 1 } },
    { sort, returnDocument: 'after', lean: true },
  );
}

/**
 * Runs one claimed timer: calls its handler (renewing the lease while it runs), then marks it done, or
 * reschedules it with backoff when the handler throws.
 */
async function runClaimed(rec: TimerRecord, advancing: boolean): Promise<boolean> {
  const renew = setInterval(() => {
    TimerModel.updateOne(
      { _id: rec._id, lease_owner: PROCESS_ID, state: 'running' },
      { $set: { lease_until: Date.now() + LEASE_MS } },
    ).catch((err: unknown) => logger.warn({ err, timerId: rec._id }, 'could not renew timer lease'));
  }, LEASE_MS / 3);
  renew.unref();
  try {
    const handler = handlers.get(rec.kind);
    if (!handler) throw new Error(`no handler registered for timer kind '${rec.kind}'`);
    const due = new Date(rec.due_at);
    let now = due;
    if (!advancing) {
      const accountNow = Date.now() + (rec.account_id ? await accountOffsetMs(rec.account_id) : 0);
      now = new Date(Math.max(due.getTime(), accountNow));
    }
    await handler(toTimer(rec), { now, advancing });
    await TimerModel.updateOne(
      { _id: rec._id, lease_owner: PROCESS_ID, state: 'running' },
      { $set: { state: 'done', done_at: new Date(), lease_until: 0, fired_by: PROCESS_ID } },
    );
    return true;
  } catch (err) {
    const attempts = rec.attempts;
    const backoff = Math.min(1_000 * 2 ** Math.max(0, attempts - 1), 5 * 60_000);
    const failed = attempts >= MAX_ATTEMPTS;
    logger.warn({ err, timerId: rec._id, kind: rec.kind, attempts, failed }, 'timer handler failed');
    await TimerModel.updateOne(
      { _id: rec._id, lease_owner: PROCESS_ID, state: 'running' },
      {
        $set: {
          state: failed ? 'failed' : 'scheduled',
          fire_at: Date.now() + backoff,
          lease_owner: null,
          lease_until: 0,
          last_error: String((err as Error)?.stack ?? err).slice(0, 2_000),
        },
      },
    ).catch((e: unknown) => logger.error({ err: e, timerId: rec._id }, 'could not reschedule failed timer'));
    return false;
  } finally {
    clearInterval(renew);
  }
}

// ---------------------------------------------------------------------------------------------------
// The poller

interface ServiceState {
  pollMs: number;
  concurrency: number;
  interval: NodeJS.Timeout;
  running: Set<Promise<unknown>>;
  polling: Promise<void> | null;
  again: boolean;
  stopping: boolean;
  wakeups: Set<NodeJS.Timeout>;
}

let service: ServiceState | null = null;

export function startTimerService(opts: { pollMs?: number; concurrency?: number } = {}): void {
  if (service) return;
  const pollMs = opts.pollMs ?? 100;
  service = {
    pollMs,
    concurrency: opts.concurrency ?? 16,
    interval: setInterval(() => void pollNow(), pollMs),
    running: new Set(),
    polling: null,
    again: false,
    stopping: false,
    wakeups: new Set(),
  };
  service.interval.unref();
  void pollNow();
}

export function timerServiceRunning(): boolean {
  return service !== null && !service.stopping;
}

/** Stops polling and waits for the handlers that are running. */
export async function stopTimerService(): Promise<void> {
  const s = service;
  if (!s) return;
  s.stopping = true;
  clearInterval(s.interval);
  for (const t of s.wakeups) clearTimeout(t);
  s.wakeups.clear();
  if (s.polling) await s.polling.catch(() => undefined);
  await Promise.allSettled([...s.running]);
  service = null;
}

/** In-process fast path: wake the poller exactly when a soon-due timer becomes due. */
function armFastPath(fireAt: number): void {
  const s = service;
  if (!s || s.stopping) return;
  const delay = fireAt - Date.now();
  if (delay > FAST_PATH_WINDOW_MS) return;
  const t = setTimeout(() => {
    s.wakeups.delete(t);
    void pollNow();
  }, Math.max(0, delay) + 1);
  t.unref();
  s.wakeups.add(t);
}

function pollNow(): Promise<void> {
  const s = service;
  if (!s || s.stopping) return Promise.resolve();
  if (s.polling) {
    s.again = true;
    return s.polling;
  }
  s.polling = (async () => {
    do {
      s.again = false;
      await pollOnce(s);
    } while (s.again && !s.stopping);
  })()
    .catch((err: unknown) => logger.error({ err }, 'timer poll failed'))
    .finally(() => {
      s.polling = null;
    });
  return s.polling;
}

async function pollOnce(s: ServiceState): Promise<void> {
  while (!s.stopping && s.running.size < s.concurrency) {
    const now = Date.now();
    const rec =
      (await claim({ state: 'scheduled', fire_at: { $lte: now } }, { fire_at: 1, created_at: 1 })) ??
      // Leases of processes that died mid-handler.
      (await claim({ state: 'running', lease_until: { $lte: now } }, { lease_until: 1 }));
    if (!rec) return;
    const p: Promise<unknown> = runClaimed(rec, false).finally(() => {
      s.running.delete(p);
      // A free slot: look for more work at once rather than at the next tick.
      if (!s.stopping) void pollNow();
    });
    s.running.add(p);
  }
}

// ---------------------------------------------------------------------------------------------------
// Sandbox clock support

/**
 * Fires, in due order, every timer of the account due at or before `upTo` (account time), including
 * timers that those handlers schedule inside the span. Handlers see `now` = their due time. Timers that
 * another process is running are waited for. A handler that throws is rescheduled with backoff and
 * not retried within this call. Returns how many timers ran.
 */
export async function runDueTimersForAccount(
  accountId: string,
  upTo: Date,
  opts: { afterEach?: () => Promise<void>; maxWaitMs?: number } = {},
): Promise<number> {
  const failed: string[] = [];
  const waitUntil = Date.now() + (opts.maxWaitMs ?? 30_000);
  let ran = 0;
  for (;;) {
    const filter: Record<string, unknown> = { account_id: accountId, state: 'scheduled', due_at: { $lte: upTo } };
    if (failed.length > 0) filter._id = { $nin: failed };
    const rec = await claim(filter, { due_at: 1, created_at: 1 });
    if (rec) {
      const ok = await runClaimed(rec, true);
      if (!ok) failed.push(rec._id);
      else ran++;
      if (opts.afterEach) await opts.afterEach();
      continue;
    }
    const busy = await TimerModel.exists({
      account_id: accountId,
      state: 'running',
      due_at: { $lte: upTo },
      lease_until: { $gt: Date.now() },
    });
    if (!busy || Date.now() > waitUntil) return ran;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * After the account's offset moved to `newOffsetMs`: every scheduled timer of the account computed with
 * an older offset gets `fire_at` moved earlier by the difference.
 */
export async function shiftAccountTimers(accountId: string, newOffsetMs: number): Promise<void> {
  const stale = (await TimerModel.distinct('offset_ms', {
    account_id: accountId,
    state: 'scheduled',
    offset_ms: { $ne: newOffsetMs },
  })) as number[];
  for (const old of stale) {
    await TimerModel.updateMany(
      { account_id: accountId, state: 'scheduled', offset_ms: old },
      { $inc: { fire_at: old - newOffsetMs }, $set: { offset_ms: newOffsetMs } },
    );
  }
  if (stale.length > 0) void pollNow();
}
