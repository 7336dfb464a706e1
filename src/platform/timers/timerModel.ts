import mongoose, { Schema } from 'mongoose';
import { MACHINE_CLOCK, machineBase } from '../clock/machineClock';

/**
 * A timer to schedule: the one input shape, whether scheduled now (scheduleTimer) or queued in an
 * outbox with its state change (outbox.ts buildTimers). Stored, it is a TimerRecord (below);
 * its handler sees it as a Timer (timerRunner.ts).
 */
export interface TimerSpec {
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

/**
 * A durable timer. `due_at` is in the account's (sandbox clock) time; `fire_at` is the real time in ms
 * at which the poller should run it: `fire_at = due_at - offset_ms`, with `offset_ms` the account's
 * clock offset when that was computed. Advancing an account's clock shifts `fire_at` of its scheduled
 * timers and updates `offset_ms`.
 *
 * States: scheduled → running (claimed with a lease) → done; a handler that throws goes back to
 * scheduled with a later `fire_at` (backoff), and to failed after too many attempts. cancelled = dropped.
 */
export type TimerState = 'scheduled' | 'running' | 'done' | 'cancelled' | 'failed';

export interface TimerRecord {
  _id: string;
  account_id: string | null;
  kind: string;
  ref_id: string;
  payload: Record<string, unknown>;
  due_at: Date;
  fire_at: number;
  offset_ms: number;
  /**
   * The wall clock `fire_at` was computed on: the machine (MACHINE_CLOCK) and its base (`wall -
   * monotonic`, src/platform/clock/machineClock.ts) then. When that machine's wall clock steps, its
   * pollers move `fire_at` by the step (timerPoller.ts, realignAfterStep), so that the timer fires
   * after the same real delay. Absent on timers stored before this field: never moved.
   */
  clock_id?: string | null;
  clock_base?: number | null;
  /**
   * The base `due_at` was computed on, kept when `clock_base` is realigned: the handler's `now`, and
   * the due times of what it schedules (computed from the payment's stored timestamps), are on it.
   */
  due_base?: number | null;
  /** With tracing on, the span that scheduled it, as a W3C traceparent (src/tracing; timerRunner.ts). */
  trace_parent?: string;
  state: TimerState;
  lease_owner: string | null;
  lease_until: number;
  /** Incremented on every claim: 1 after a timer that fired once. */
  attempts: number;
  /** Real time of the last claim, i.e. when its handler last started. */
  claimed_at: Date | null;
  /** Random token of the batch claim that last took it (see claimBatch). */
  claim_token?: string | null;
  last_error: string | null;
  /** Process that completed it (diagnostics). */
  fired_by: string | null;
  created_at: Date;
  done_at: Date | null;
}

const timerSchema = new Schema<TimerRecord>(
  {
    _id: { type: String, required: true },
    account_id: { type: String, default: null },
    kind: { type: String, required: true },
    ref_id: { type: String, required: true },
    payload: { type: Schema.Types.Mixed, default: () => ({}) },
    due_at: { type: Date, required: true },
    fire_at: { type: Number, required: true },
    offset_ms: { type: Number, required: true, default: 0 },
    clock_id: { type: String, default: null },
    clock_base: { type: Number, default: null },
    due_base: { type: Number, default: null },
    trace_parent: { type: String },
    state: { type: String, required: true },
    lease_owner: { type: String, default: null },
    lease_until: { type: Number, required: true, default: 0 },
    attempts: { type: Number, required: true, default: 0 },
    claimed_at: { type: Date, default: null },
    claim_token: { type: String, default: null },
    last_error: { type: String, default: null },
    fired_by: { type: String, default: null },
    created_at: { type: Date, required: true },
    done_at: { type: Date, default: null },
  },
  { versionKey: false, minimize: false, collection: 'timers' },
);

/**
 * How long done and cancelled timers are kept (diagnostics, "fired once" checks) before the TTL index
 * on `done_at` deletes them. Read here because the index is declared when this module loads, before any
 * Config object exists; `loadConfig` validates the same variable (TIMER_RETENTION_HOURS, 1 h … 1 year).
 */
export const TIMER_RETENTION_SECONDS = retentionHours(process.env.TIMER_RETENTION_HOURS) * 3_600;

function retentionHours(raw: string | undefined): number {
  const n = Number(raw);
  return raw && Number.isInteger(n) && n >= 1 && n <= 24 * 365 ? n : 24;
}

// Partial indexes: each holds only the timers its queries can want (its size follows the live work, not the
// history) and gives them their order, so no claim sorts in memory; every query names the state by equality,
// so the partial index covers it. What each index serves: the notes. More:
// docs/decisions/notes/timers-and-clock.md, "The timers' indexes".
timerSchema.index({ fire_at: 1, created_at: 1 }, { name: 'scheduled_by_fire_at', partialFilterExpression: { state: 'scheduled' } });
timerSchema.index({ lease_until: 1 }, { name: 'running_by_lease_until', partialFilterExpression: { state: 'running' } });
timerSchema.index(
  { account_id: 1, due_at: 1, created_at: 1 },
  { name: 'scheduled_by_account_due_at', partialFilterExpression: { state: 'scheduled' } },
);
timerSchema.index({ ref_id: 1 });
// After a step of the wall clock: this machine's scheduled timers computed on the old clock (a range
// of `clock_base` each side of the new one, timerPoller.ts realignAfterStep).
timerSchema.index({ clock_id: 1, clock_base: 1 }, { name: 'scheduled_by_clock', partialFilterExpression: { state: 'scheduled' } });
timerSchema.index(
  { done_at: 1 },
  { name: 'finished_ttl', expireAfterSeconds: TIMER_RETENTION_SECONDS, partialFilterExpression: { done_at: { $type: 'date' } } },
);

/** A timer as scheduleTimer stores it: scheduled, never claimed. */
export function newTimerRecord(t: Omit<TimerSpec, 'dedupeKey'> & {
  id: string;
  fireAt: number;
  offsetMs: number;
  /** machineBase() when `fireAt` was computed (default: now). */
  clockBase?: number;
  /** The base `dueAt` is on (default: clockBase). */
  dueBase?: number;
  traceParent?: string;
}): TimerRecord {
  return {
    _id: t.id,
    account_id: t.accountId,
    kind: t.kind,
    ref_id: t.refId,
    payload: t.payload ?? {},
    due_at: t.dueAt,
    fire_at: t.fireAt,
    offset_ms: t.offsetMs,
    clock_id: MACHINE_CLOCK,
    clock_base: t.clockBase ?? machineBase(),
    due_base: t.dueBase ?? t.clockBase ?? machineBase(),
    state: 'scheduled',
    lease_owner: null,
    lease_until: 0,
    attempts: 0,
    claimed_at: null,
    last_error: null,
    fired_by: null,
    created_at: new Date(),
    done_at: null,
    ...(t.traceParent && { trace_parent: t.traceParent }),
  };
}

export const TimerModel = mongoose.model<TimerRecord>('Timer', timerSchema);
