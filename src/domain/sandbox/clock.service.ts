import { randomUUID } from 'node:crypto';
import { ApiError } from '../../errors';
import { logger } from '../../logger';
import { runDueTimersForAccount, shiftAccountTimers } from '../../jobs/timers/timer.service';
import { accountNow, accountOffsetMs, incrementAccountOffset } from '../clock/clock';
import { hooksIdle } from '../events/event.hooks';
import { accountIdOf, type ActorOrAccount } from '../payments/actor';
import { isDuplicateKey } from '../../db/errors';
import { ClockLockModel } from './clockLock.model';

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
const LOCK_LEASE_MS = 120_000;
const LOCK_WAIT_MS = 60_000;

export async function getSandboxClock(actor: ActorOrAccount): Promise<SandboxClockResource> {
  const offset = await accountOffsetMs(accountIdOf(actor));
  return toClock(offset);
}

function toClock(offsetMs: number): SandboxClockResource {
  return { object: 'sandbox_clock', now: accountNow(offsetMs).toISOString(), offset_seconds: Math.floor(offsetMs / 1000) };
}

export async function advanceSandboxClock(actor: ActorOrAccount, seconds: number): Promise<SandboxClockResource> {
  const accountId = accountIdOf(actor);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_ADVANCE_SECONDS) {
    throw ApiError.invalid(`Invalid field 'seconds': an integer from 1 to ${MAX_ADVANCE_SECONDS}`);
  }
  const owner = await acquireLock(accountId);
  try {
    const offset = await accountOffsetMs(accountId);
    const target = new Date(Date.now() + offset + seconds * 1000);
    const afterEach = () => hooksIdle(accountId);
    await runDueTimersForAccount(accountId, target, { afterEach });
    const newOffset = await incrementAccountOffset(accountId, seconds * 1000);
    await shiftAccountTimers(accountId, newOffset);
    // Timers scheduled in the span by work that ran concurrently (a real-time handler, a request).
    await runDueTimersForAccount(accountId, target, { afterEach });
    await hooksIdle(accountId);
    return toClock(newOffset);
  } finally {
    await ClockLockModel.deleteOne({ _id: accountId, owner }).catch((err: unknown) =>
      logger.warn({ err, accountId }, 'could not release sandbox clock lock'),
    );
  }
}

async function acquireLock(accountId: string): Promise<string> {
  const owner = randomUUID();
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    const now = Date.now();
    try {
      await ClockLockModel.create({ _id: accountId, owner, lease_until: now + LOCK_LEASE_MS });
      return owner;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    const taken = await ClockLockModel.findOneAndUpdate(
      { _id: accountId, lease_until: { $lte: now } },
      { $set: { owner, lease_until: now + LOCK_LEASE_MS } },
      { lean: true, projection: { _id: 1 } },
    );
    if (taken) return owner;
    if (Date.now() > deadline) {
      throw new ApiError('rate_limit_exceeded', 'Another clock advance of this account is still running', { 'Retry-After': '5' });
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}
