import { PROCESS_ID } from '../../processId';
import { logger } from '../../logger';
import { accountOffsetMs } from '../../domain/clock/clock';
import { TimerModel, type TimerRecord } from './timer.model';

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
}

export type TimerHandler = (timer: Timer, ctx: TimerContext) => Promise<void>;

export type { TimerRecord };

const handlers = new Map<string, TimerHandler>();

const LEASE_MS = 30_000;
const MAX_ATTEMPTS = 25;

export function registerTimerHandler(kind: string, handler: TimerHandler): void {
  handlers.set(kind, handler);
}

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

export async function claim(filter: Record<string, unknown>, sort: Record<string, 1 | -1>): Promise<TimerRecord | null> {
  const now = Date.now();
  return TimerModel.findOneAndUpdate(
    filter,
    { $set: { state: 'running', lease_owner: PROCESS_ID, lease_until: now + LEASE_MS, claimed_at: new Date(now) }, $inc: { attempts: 1 } },
    { sort, returnDocument: 'after', lean: true },
  );
}

/**
 * Runs one claimed timer: calls its handler (renewing the lease while it runs), then marks it done, or
 * reschedules it with backoff when the handler throws.
 */
export async function runClaimed(rec: TimerRecord, advancing: boolean): Promise<boolean> {
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

