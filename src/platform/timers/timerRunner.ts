import { driverCollection } from '../../db/driverCollection';
import crypto from 'node:crypto';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { mongo } from 'mongoose';
import { PROCESS_ID } from '../../processId';
import { logger } from '../../logger';
import { updateOneBatched } from '../../db/batching';
import { APPLIED_WRITE_CONCERN } from '../../db/writeConcern';
import { accountOffsetMs } from './accountClock';
import { MACHINE_CLOCK, machineBase, sameBase } from '../clock/machineClock';
import { timerFired } from '../../metrics/domain';
import { TimerModel, type TimerRecord } from './timerModel';
import { TimerDeferral } from './timerDeferral';
import { inSpan, tracingOn } from '../../tracing/tracing';

/** Handlers, the claim of a due timer, and running one claimed timer (shared by the poller and clock advances). */
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
  /**
   * The account's clock offset (ms) as read just before the handler started (not during an advance):
   * a handler scheduling follow-ups can hand it to scheduleTimer (`offsetMs`) instead of reading it again.
   */
  offsetMs?: number;
}

export type TimerHandler = (timer: Timer, ctx: TimerContext) => Promise<void>;

export type { TimerRecord };

/**
 * One gateway's timer handlers, by kind: each module registers its own on the registry its gateway
 * built (src/server.ts), and a timer claimed by that gateway (its poller, a clock advance it serves)
 * runs that gateway's handler.
 */
export interface TimerRegistry {
  register(kind: string, handler: TimerHandler): void;
  handler(kind: string): TimerHandler | undefined;
}

export function createTimerRegistry(): TimerRegistry {
  const handlers = new Map<string, TimerHandler>();
  return {
    register(kind, handler) {
      handlers.set(kind, handler);
    },
    handler: (kind) => handlers.get(kind),
  };
}

/**
 * The base of the wall clock (machineClock.ts) the running handler's times are on: its timer's `due_base`.
 * A handler computes follow-ups from stored timestamps, which after a step are off today's clock by the
 * step; a follow-up's timer records this base, so that it is moved by the step at once, as a realignment
 * would have moved it. More: docs/decisions/notes/timers-and-clock.md, "The due timeline".
 */
// eslint-disable-next-line no-restricted-syntax -- an AsyncLocalStorage: each running handler sees its own base, nothing is shared
const dueTimeline = new AsyncLocalStorage<number>();

/** The base due times being scheduled now are on: the running handler's, else today's. */
export function dueTimelineBase(): number {
  return dueTimeline.getStore() ?? machineBase();
}

const LEASE_MS = 30_000;
const MAX_ATTEMPTS = 25;

export function timerProcessId(): string {
  return PROCESS_ID;
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

function timers(): mongo.Collection<TimerRecord> {
  return driverCollection<TimerRecord>(TimerModel);
}

function leaseSet(now: number): Pick<TimerRecord, 'state' | 'lease_owner' | 'lease_until' | 'claimed_at'> {
  return { state: 'running', lease_owner: PROCESS_ID, lease_until: now + LEASE_MS, claimed_at: new Date(now) };
}

/**
 * After a step of the wall clock: the leases of the timers this process is running, counted again
 * from now. Stamped before the step, they would look expired to other processes after a step forward
 * (and be run a second time), or an hour long after a step back.
 */
export async function renewOwnLeases(): Promise<void> {
  // `lease_until` (every running timer has one) lets the running timers' partial index find them: they
  // are few (at most every process's handler slots), where the collection holds every finished timer too.
  await timers().updateMany({ state: 'running', lease_until: { $gte: 0 }, lease_owner: PROCESS_ID }, { $set: { lease_until: Date.now() + LEASE_MS } });
}

/** Claims the first due timer in `sort` order (one round trip): sandbox clock advances, which run in due order. */
export async function claim(filter: Record<string, unknown>, sort: Record<string, 1 | -1>): Promise<TimerRecord | null> {
  return TimerModel.findOneAndUpdate(
    filter,
    { $set: leaseSet(Date.now()), $inc: { attempts: 1 } },
    { sort, returnDocument: 'after', lean: true },
  );
}

/**
 * Claims up to `limit` timers in `sort` order in two commands whatever the batch size: a read in index order,
 * then one conditional `updateMany` that re-checks the filter and stamps a fresh claim token, so of two
 * racing processes exactly one claims a timer. A third read only when another process took some. More:
 * docs/decisions/notes/timers-and-clock.md, "claimBatch".
 */
export async function claimBatch(filter: Record<string, unknown>, sort: Record<string, 1 | -1>, limit: number): Promise<TimerRecord[]> {
  // The driver's collection: the poller runs these ten times a second, and the filters are plain.
  const due = await timers().find(filter, { sort, limit }).toArray();
  if (due.length === 0) return [];
  const ids = due.map((d) => d._id);
  const claim = { ...leaseSet(Date.now()), claim_token: crypto.randomBytes(9).toString('base64url') };
  // Acknowledged once applied: a claim lost with a crash or a failover leaves its timers to be claimed
  // again, and handlers are idempotent; the handler's own writes come after it in the journal.
  const res = await timers().updateMany({ $and: [filter, { _id: { $in: ids } }] }, { $set: claim, $inc: { attempts: 1 } }, { writeConcern: APPLIED_WRITE_CONCERN });
  if (res.modifiedCount === due.length) return due.map((d) => ({ ...d, ...claim, attempts: d.attempts + 1 }) as TimerRecord);
  if (res.modifiedCount === 0) return [];
  const claimed = await timers().find({ _id: { $in: ids }, claim_token: claim.claim_token }).toArray();
  const rank = new Map(ids.map((id, i) => [id, i]));
  return claimed.sort((a, b) => rank.get(a._id)! - rank.get(b._id)!);
}

/**
 * Runs one claimed timer (renewing its lease), then marks it done, or reschedules it with backoff when the
 * handler throws. `clock`: 'claimed' trusts the timer's own `offset_ms` (every shift moves it, so no account
 * read), 'read' reads the account (a timer recovered from a dead process). More:
 * docs/decisions/notes/timers-and-clock.md, "runClaimed".
 */
export async function runClaimed(
  rec: TimerRecord,
  advancing: boolean,
  clock: 'claimed' | 'read' = 'read',
  registry: TimerRegistry,
): Promise<boolean> {
  const renew = setInterval(() => {
    TimerModel.updateOne(
      { _id: rec._id, lease_owner: PROCESS_ID, state: 'running' },
      { $set: { lease_until: Date.now() + LEASE_MS } },
    ).catch((err: unknown) => logger.warn({ err, timerId: rec._id }, 'could not renew timer lease'));
  }, LEASE_MS / 3);
  renew.unref();
  try {
    const handler = registry.handler(rec.kind);
    if (!handler) throw new Error(`no handler registered for timer kind '${rec.kind}'`);
    const due = new Date(rec.due_at);
    let now = due;
    let offsetMs: number | undefined;
    const dueBase = rec.due_base ?? rec.clock_base ?? machineBase();
    if (!advancing) {
      // Fired minus due on the wall clock (fire_at); an advance runs timers early on purpose.
      timerFired.observe(Math.max(0, Date.now() - rec.fire_at) / 1000);
      offsetMs = !rec.account_id ? 0 : clock === 'claimed' && typeof rec.offset_ms === 'number' ? rec.offset_ms : await accountOffsetMs(rec.account_id);
      // The clock read on the due time's base: after a step forward, today's wall time would put the
      // handler's timestamps (and its follow-ups' due times) an hour after its payment's.
      now = new Date(Math.max(due.getTime(), Date.now() - (machineBase() - dueBase) + offsetMs));
    }
    // Inside the store only when the timer is due on another timeline than today's (a wall-clock step
    // since it was written): on Node 20 the first AsyncLocalStorage.run turns promise hooks on for the
    // whole process, 7 % of a GraphQL detail query's instructions (bench/README.md, issue 56). On today's
    // timeline dueTimelineBase() answers the same without it.
    const context = { now, advancing, offsetMs };
    const fire = () => (sameBase(dueBase, machineBase()) ? handler(toTimer(rec), context) : dueTimeline.run(dueBase, () => handler(toTimer(rec), context)));
    // With tracing on: a span in the trace of what scheduled it (the request that created the payment,
    // the firing before), and linked to it, so one trace shows POST → rail steps → their webhooks.
    if (tracingOn()) {
      await inSpan(`timer ${rec.kind}`, { parent: rec.trace_parent, links: [rec.trace_parent], attributes: { 'pgw.timer.kind': rec.kind, 'pgw.timer.attempt': rec.attempts } }, fire);
    } else await fire();
    // Bookkeeping of a handler that succeeded: the timers finishing in one turn share one command.
    await updateOneBatched(
      TimerModel,
      { _id: rec._id, lease_owner: PROCESS_ID, state: 'running' },
      { $set: { state: 'done', done_at: new Date(), lease_until: 0, fired_by: PROCESS_ID } },
      // A done mark lost with a crash fires the timer again, which finds its work done.
      'applied',
    );
    return true;
  } catch (err) {
    if (err instanceof TimerDeferral) {
      await deferClaimed(rec, err);
      return false;
    }
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
          // Computed on this machine's wall clock, now: realigned with it if it steps.
          clock_id: MACHINE_CLOCK,
          clock_base: machineBase(),
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

/** A deferred timer goes back to scheduled at its retry time, its claim's attempt given back. */
async function deferClaimed(rec: TimerRecord, deferral: TimerDeferral): Promise<void> {
  logger.debug({ timerId: rec._id, kind: rec.kind, retryInMs: deferral.retryInMs, reason: deferral.message }, 'timer deferred');
  await TimerModel.updateOne(
    { _id: rec._id, lease_owner: PROCESS_ID, state: 'running' },
    {
      $set: { state: 'scheduled', fire_at: Date.now() + Math.max(100, deferral.retryInMs), clock_id: MACHINE_CLOCK, clock_base: machineBase(), lease_owner: null, lease_until: 0 },
      $inc: { attempts: -1 },
    },
  ).catch((e: unknown) => logger.error({ err: e, timerId: rec._id }, 'could not reschedule deferred timer'));
}

