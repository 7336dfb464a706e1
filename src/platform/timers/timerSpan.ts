import { TimerModel } from './timerModel';
import { monotonicMs } from '../clock/machineClock';
import { pollNow, type GatewayTimers } from './timerPoller';
import { claim, runClaimed } from './timerRunner';

/** Sandbox clock support: run an account's timers due in a span, and shift the rest after the offset moved. */
/**
 * Fires, in due order, every timer of the account due at or before `upTo` (account time), including
 * timers that those handlers schedule inside the span. Handlers see `now` = their due time. Timers that
 * another process is running are waited for. A handler that throws is rescheduled with backoff and
 * not retried within this call. Returns how many timers ran.
 */
export async function runDueTimersForAccount(
  timers: GatewayTimers,
  accountId: string,
  upTo: Date,
  opts: { afterEach?: () => Promise<void>; maxWaitMs?: number } = {},
): Promise<number> {
  const failed: string[] = [];
  // In-process wait: on the monotonic clock, which a step of the wall clock does not move.
  const waitUntil = monotonicMs() + (opts.maxWaitMs ?? 30_000);
  let ran = 0;
  for (;;) {
    const filter: Record<string, unknown> = { account_id: accountId, state: 'scheduled', due_at: { $lte: upTo } };
    if (failed.length > 0) filter._id = { $nin: failed };
    const rec = await claim(filter, { due_at: 1, created_at: 1 });
    if (rec) {
      const ok = await runClaimed(rec, true, 'read', timers);
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
    if (!busy || monotonicMs() > waitUntil) return ran;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * After the account's offset moved to `newOffsetMs`: every scheduled timer of the account computed with
 * an older offset gets `fire_at` moved earlier by the difference. One pipeline update, which reads each
 * timer's own old offset, rather than a distinct of the old offsets and an update per offset.
 */
export async function shiftAccountTimers(timers: GatewayTimers, accountId: string, newOffsetMs: number): Promise<void> {
  const res = await TimerModel.updateMany(
    { account_id: accountId, state: 'scheduled', offset_ms: { $ne: newOffsetMs } },
    [{ $set: { fire_at: { $add: ['$fire_at', { $subtract: ['$offset_ms', newOffsetMs] }] }, offset_ms: newOffsetMs } }],
    { updatePipeline: true },
  );
  if (res.modifiedCount > 0) void pollNow(timers);
}
