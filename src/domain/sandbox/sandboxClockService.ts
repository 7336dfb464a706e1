import { randomUUID } from 'node:crypto';
import { ApiError } from '../../errors';
import { logger } from '../../logger';
import { runDueTimersForAccount, shiftAccountTimers } from '../../platform/timers/timerService';
import { accountNow, accountOffsetMs, incrementAccountOffset } from '../clock/accountTime';
import type { GatewayRuntime } from '../gatewayRuntime';
import { accountIdOf, type ActorOrAccount } from '../payments/actor';
import { isDuplicateKey } from '../../db/errors';
import { ClockLockModel } from './clockLockModel';

/**
 * The sandbox clock (contract decisions, beyond the spec): each account's time is real time plus an
 * offset that only grows. Advancing it fires every timer of the account due in the span, in due order,
 * before answering — rail steps, refunds, expiries, webhook retries, and whatever those schedule inside
 * the span — then moves the offset and shifts the account's later timers.
 */
export interface SandboxClockResource {
  object: 'sandbox_clock';
  now: string;
  offset_seconds: number;
}

export const MAX_ADVANCE_SECONDS = 31_536_000;

/**
 * Concurrent advances of one account run one after the other (contract decisions: never 429): a promise chain
 * within a process, and across processes a lock document per account under a lease, renewed while its holder
 * works and taken over once a dead holder's lease lapses. Leases are wall-clock milliseconds: the processes'
 * clocks must agree well within LEASE_MS. More: docs/decisions/notes/events-and-payments.md, "Clock advances
 * one at a time".
 */
export const clockLockSettings = {
  leaseMs: 30_000,
  renewEveryMs: 10_000,
  pollMinMs: 10,
  pollMaxMs: 250,
  maxWaitMs: 10 * 60_000,
};

export async function getSandboxClock(actor: ActorOrAccount): Promise<SandboxClockResource> {
  const offset = await accountOffsetMs(accountIdOf(actor));
  return toClock(offset);
}

function toClock(offsetMs: number): SandboxClockResource {
  return { object: 'sandbox_clock', now: accountNow(offsetMs).toISOString(), offset_seconds: Math.floor(offsetMs / 1000) };
}

/** `runtime`: the serving gateway's: its handlers run the timers due in the span, its hooks are waited for. */
export async function advanceSandboxClock(runtime: GatewayRuntime, actor: ActorOrAccount, seconds: number): Promise<SandboxClockResource> {
  const accountId = accountIdOf(actor);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_ADVANCE_SECONDS) {
    throw ApiError.invalid(`Invalid field 'seconds': an integer from 1 to ${MAX_ADVANCE_SECONDS}`);
  }
  return withAccountClockLock(accountId, async () => {
    // Read inside the lock: the offset includes every advance that ran before this one.
    const offset = await accountOffsetMs(accountId);
    const target = new Date(Date.now() + offset + seconds * 1000);
    const afterEach = () => runtime.hooks.hooksIdle(accountId);
    await runDueTimersForAccount(runtime.timers, accountId, target, { afterEach });
    const newOffset = await incrementAccountOffset(accountId, seconds * 1000);
    await shiftAccountTimers(runtime.timers, accountId, newOffset);
    // Timers scheduled in the span by work that ran concurrently (a real-time handler, a request).
    await runDueTimersForAccount(runtime.timers, accountId, target, { afterEach });
    await runtime.hooks.hooksIdle(accountId);
    return toClock(newOffset);
  });
}

/** The last advance queued in this process per account: the next one starts after it settles. */
// Shared by the gateways of a process: the account and its clock are the database's, and advances of one
// account one after the other is what the queue is for, whichever gateway serves them.
// eslint-disable-next-line no-restricted-syntax -- per account of the database, not per gateway
const localQueue = new Map<string, Promise<unknown>>();

/**
 * Runs `work` holding the account's clock lock: alone in this process, then alone across processes.
 * Also the sandbox reset's (sandboxResetService.ts), which sets the clock back and must not interleave
 * with an advance moving it forward.
 */
export async function withAccountClockLock<T>(accountId: string, work: () => Promise<T>): Promise<T> {
  const before = localQueue.get(accountId) ?? Promise.resolve();
  const run = before.then(
    () => holdingDatabaseLock(accountId, work),
    () => holdingDatabaseLock(accountId, work),
  );
  localQueue.set(accountId, run);
  try {
    return await run;
  } finally {
    // The last in the queue removes it, so the map holds only accounts with an advance in flight.
    if (localQueue.get(accountId) === run) localQueue.delete(accountId);
  }
}

async function holdingDatabaseLock<T>(accountId: string, work: () => Promise<T>): Promise<T> {
  const owner = await acquireLock(accountId);
  const renewal = setInterval(() => void renewLease(accountId, owner), clockLockSettings.renewEveryMs);
  renewal.unref();
  try {
    return await work();
  } finally {
    clearInterval(renewal);
    await ClockLockModel.deleteOne({ _id: accountId, owner }).catch((err: unknown) =>
      logger.warn({ err, accountId }, 'could not release sandbox clock lock (it lapses with its lease)'),
    );
  }
}

async function renewLease(accountId: string, owner: string): Promise<void> {
  try {
    const res = await ClockLockModel.updateOne({ _id: accountId, owner }, { $set: { lease_until: Date.now() + clockLockSettings.leaseMs } });
    // Only a holder stalled for longer than its lease (an event loop blocked that long) can lose it.
    if (res.matchedCount === 0) logger.warn({ accountId }, 'sandbox clock lock lost: its lease lapsed while the advance ran');
  } catch (err) {
    logger.warn({ err, accountId }, 'could not renew the sandbox clock lock lease');
  }
}

async function acquireLock(accountId: string): Promise<string> {
  const owner = randomUUID();
  const giveUpAt = performance.now() + clockLockSettings.maxWaitMs;
  let delay = clockLockSettings.pollMinMs;
  for (;;) {
    const now = Date.now();
    try {
      await ClockLockModel.create({ _id: accountId, owner, lease_until: now + clockLockSettings.leaseMs });
      return owner;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    // Held: take it over only if its holder stopped renewing (conditional, so one waiter wins).
    const taken = await ClockLockModel.findOneAndUpdate(
      { _id: accountId, lease_until: { $lte: now } },
      { $set: { owner, lease_until: now + clockLockSettings.leaseMs } },
      { lean: true, projection: { _id: 1 } },
    );
    if (taken) return owner;
    if (performance.now() > giveUpAt) {
      logger.error({ accountId, waitedMs: clockLockSettings.maxWaitMs }, 'sandbox clock advance: the lock was held for too long');
      throw new ApiError('internal_error', 'Another clock advance of this account has been running for too long; retry later');
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, clockLockSettings.pollMaxMs);
  }
}
