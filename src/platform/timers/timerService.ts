/**
 * Durable timers in MongoDB (README.md here: why not a library): stored, claimed in batches under a lease so
 * that each fires once across processes, retried with backoff (handlers are idempotent), following each
 * account's sandbox clock. timerRunner.ts runs, timerPoller.ts polls, timerSpan.ts follows clock advances;
 * this file schedules and cancels. More: docs/decisions/notes/timers-and-clock.md, "Durable timers".
 */

import { createHash } from 'node:crypto';
import { insertBatched } from '../../db/batching';
import { countMatching } from '../../db/driverCollection';
import type { Acknowledge } from '../../db/writeConcern';
import { newId } from '../../ids';
import { isDuplicateKey } from '../../db/errors';
import { TimerModel, newTimerRecord, type TimerSpec } from './timerModel';
import { armFastPath, type GatewayTimers } from './timerPoller';
import { accountOffsetMs } from './accountClock';
import { machineBase, sameBase } from '../clock/machineClock';
import { dueTimelineBase } from './timerRunner';
import { currentTraceParent } from '../../tracing/tracing';

export interface ScheduleTimerInput extends TimerSpec {
  /**
   * The account's clock offset as the caller read it moments ago (saves reading it again). The
   * offset is checked once more after the insert either way, which corrects for an advance in between.
   */
  offsetMs?: number;
  /**
   * When the insert is answered (src/db/writeConcern.ts): 'durable' (default), or 'applied' when a
   * durable record of the timer exists already and outlives a lost insert (an outbox's pending timer).
   */
  acknowledge?: Acknowledge;
  /**
   * The base of the wall clock `dueAt` was computed on (machineClock.ts), when it was computed
   * elsewhere than here (an outbox queues timers for later). Default: dueTimelineBase().
   */
  dueBase?: number;
  /** The span that scheduled it (src/tracing), when it was scheduled elsewhere than here; default the active one. */
  traceParent?: string;
  /**
   * The scheduling gateway's timers, whose poller is woken at the due time when it is soon. Without
   * (a script, a test), a poller finds the timer at its next poll.
   */
  timers?: GatewayTimers;
}

export function dedupeTimerId(accountId: string | null, kind: string, dedupeKey: string): string {
  const key = [accountId ?? '', kind, dedupeKey].join('\u0000');
  return `tmr_${createHash('sha256').update(key).digest('hex').slice(0, 40)}`;
}

export async function scheduleTimer(input: ScheduleTimerInput): Promise<{ id: string; created: boolean }> {
  const { id, created, settled } = await insertTimer(input);
  await settled;
  return { id, created };
}

/**
 * scheduleTimer in two steps, for callers with other work to overlap: resolves once the timer is
 * stored; `settled` once its fire time has been checked against a concurrent clock advance (and
 * the local fast path armed).
 */
export async function insertTimer(input: ScheduleTimerInput): Promise<{ id: string; created: boolean; settled: Promise<void> }> {
  const id = input.dedupeKey ? dedupeTimerId(input.accountId, input.kind, input.dedupeKey) : newId('tmr');
  // The base of the wall clock the due time was computed on (machineClock.ts), and today's: `fire_at`
  // is stored on today's, so that no poller takes it for overdue (or for an hour away) meanwhile. A step
  // between here and the settle below is corrected there, one after it by the pollers' realignment
  // (timerPoller.ts).
  const dueBase = input.dueBase ?? dueTimelineBase();
  const clockBase = machineBase();
  const offset = !input.accountId ? 0 : (input.offsetMs ?? (await accountOffsetMs(input.accountId)));
  const fireAt = input.dueAt.getTime() - offset + (clockBase - dueBase);
  try {
    await insertBatched(
      TimerModel,
      newTimerRecord({
        ...input,
        id,
        fireAt,
        offsetMs: offset,
        clockBase,
        dueBase,
        traceParent: input.traceParent ?? currentTraceParent(),
      }),
      input.acknowledge,
    );
  } catch (err) {
    if (isDuplicateKey(err)) return { id, created: false, settled: Promise.resolve() };
    throw err;
  }
  const accountId = input.accountId;
  const settle = async () => {
    let effectiveFireAt = fireAt;
    if (accountId) {
      // A clock advance may have moved the offset between our read and our insert, after it shifted
      // the account's timers: fix ours (conditional on the offset we used, so it is shifted exactly once).
      const now = await accountOffsetMs(accountId);
      if (now !== offset) {
        await TimerModel.updateOne(
          { _id: id, state: 'scheduled', offset_ms: offset },
          { $inc: { fire_at: offset - now }, $set: { offset_ms: now } },
        );
        effectiveFireAt = fireAt + offset - now;
      }
    }
    // The wall clock stepped since `fireAt` was computed: move it by the step, unless a poller's
    // realignment did already (conditional on the base it was computed on, so it moves once).
    const base = machineBase();
    if (!sameBase(base, clockBase)) {
      await TimerModel.updateOne({ _id: id, state: 'scheduled', clock_base: clockBase }, { $inc: { fire_at: base - clockBase }, $set: { clock_base: base } });
      effectiveFireAt += base - clockBase;
    }
    if (input.timers) armFastPath(input.timers, effectiveFireAt);
  };
  const settled = settle();
  // Whoever awaits `settled` sees its failure; until then it must not count as unhandled.
  settled.catch(() => undefined);
  return { id, created: true, settled };
}

/** Cancels scheduled (not yet running) timers of a reference. Returns how many. */
/** Bound of a scrape's count: past it the gauge says "at least this many", which is alarm enough. */
const COUNT_LIMIT = 1_000_000;

/** pgw_timers_due: scheduled timers whose fire time has passed (the `scheduled_by_fire_at` index). */
export function countDueTimers(): Promise<number> {
  return countMatching(TimerModel, { state: 'scheduled', fire_at: { $lte: Date.now() } }, COUNT_LIMIT);
}

export async function cancelTimers(filter: { accountId?: string; kind?: string; refId: string }): Promise<number> {
  const q: Record<string, unknown> = { ref_id: filter.refId, state: 'scheduled' };
  if (filter.accountId) q.account_id = filter.accountId;
  if (filter.kind) q.kind = filter.kind;
  const res = await TimerModel.updateMany(q, { $set: { state: 'cancelled', done_at: new Date() } });
  return res.modifiedCount;
}


export type { TimerSpec };
export { dueTimelineBase, timerProcessId, type Timer, type TimerContext, type TimerHandler, type TimerRegistry } from './timerRunner';
export { createGatewayTimers, startTimerService, stopTimerService, timerServiceRunning, wakeElsewhere, type GatewayTimers } from './timerPoller';
export { useAccountClock, type AccountOffsetLookup } from './accountClock';
export { runDueTimersForAccount, shiftAccountTimers } from './timerSpan';
