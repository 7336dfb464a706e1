import { findByIdBatched } from '../../db/batching';
import { AccountModel, type AccountRecord } from '../accounts/accountModel';

/**
 * "Now" on an account's sandbox clock: each account sees real time shifted forward by its own offset, so
 * integrators can reach 72-hour expiries and 5-minute retries in milliseconds. Everything that writes a
 * timestamp or schedules a timer for an account asks this module for "now". Advancing the clock is
 * src/domain/sandbox/sandboxClockService.ts.
 */
export function accountNow(offsetMs: number, realNow: number = Date.now()): Date {
  return new Date(realNow + offsetMs);
}

/**
 * The account fields read on hot paths (its clock offset, the reference entity a new payment needs,
 * and the version of its webhook endpoints a delivery needs), always with this one projection so that
 * concurrent reads share one batched query.
 */
export async function readAccountClock(
  accountId: string,
): Promise<Pick<AccountRecord, '_id' | 'clock_offset_ms' | 'reference_entity' | 'endpoints_version'> | null> {
  return findByIdBatched(AccountModel, accountId, { clock_offset_ms: 1, reference_entity: 1, endpoints_version: 1 });
}

/** Reads the offset from the database, so every gateway process agrees on an account's time. */
export async function nowForAccount(accountId: string): Promise<Date> {
  return accountNow(await accountOffsetMs(accountId));
}

/** The account's clock offset in ms (0 for an unknown account). */
export async function accountOffsetMs(accountId: string): Promise<number> {
  const acct = await readAccountClock(accountId);
  return acct?.clock_offset_ms ?? 0;
}

/**
 * Moves the account's clock forward by `deltaMs` (atomically, so concurrent writers agree) and returns
 * the new offset. Only sandboxClockService.ts calls this, after it has fired the timers in the span.
 */
export async function incrementAccountOffset(accountId: string, deltaMs: number): Promise<number> {
  if (!Number.isSafeInteger(deltaMs) || deltaMs < 0) throw new RangeError('the sandbox clock only moves forward');
  const acct = await AccountModel.findOneAndUpdate(
    { _id: accountId },
    { $inc: { clock_offset_ms: deltaMs } },
    { returnDocument: 'after', projection: { clock_offset_ms: 1 }, lean: true },
  );
  if (!acct) throw new Error(`account ${accountId} not found`);
  return acct.clock_offset_ms;
}
