import mongoose, { Schema } from 'mongoose';

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

// Each index gives its queries their order, so no claim sorts in memory (on MongoDB or the embedded
// engine) however large the backlog:
// - {state, fire_at, created_at}: the poller's claims (`state: scheduled, fire_at <= now`, in fire order),
//   lease recovery (`state: running` is a short prefix: the timers being run right now), and the pruning
//   of finished timers (`state: done, fire_at < now - retention`). No {state, lease_until} index: every
//   scheduled and every done timer would share one key in it, maintained on each insert and claim for nothing.
// - {account_id, state, due_at, created_at}: a sandbox clock advance fires the account's due timers in due order.
// - {ref_id, state}: cancelling a payment's scheduled timers.
timerSchema.index({ state: 1, fire_at: 1, created_at: 1 });
timerSchema.index({ account_id: 1, state: 1, due_at: 1, created_at: 1 });
timerSchema.index({ ref_id: 1, state: 1 });

export const TimerModel = mongoose.model<TimerRecord>('Timer', timerSchema);
