import { AccountModel } from '../accounts/account.model';

/**
 * The sandbox clock: each account sees real time shifted forward by its own offset, so integrators can
 * reach 72-hour expiries and 5-minute retries in milliseconds. Everything that writes a timestamp or
 * schedules a timer for an account asks this module for "now".
 */
export function accountNow(offsetMs: number, realNow: number = Date.now()): Date {
  return new Date(realNow + offsetMs);
}

/** Reads the offset from the database, so every gateway process agrees on an account's time. */
export async function nowForAccount(accountId: string): Promise<Date> {
  const acct = await AccountModel.findById(accountId, { clock_offset_ms: 1 }).lean();
  return accountNow(acct?.clock_offset_ms ?? 0);
}

/** The account's clock offset in ms (0 for an unknown account). */
export async function accountOffsetMs(accountId: string): Promise<number> {
  const acct = await AccountModel.findById(accountId, { clock_offset_ms: 1 }).lean();
  return acct?.clock_offset_ms ?? 0;
}

/**
 * Moves the account's clock forward by `deltaMs` (atomically, so concurrent writers agree) and returns
 * the new offset. Only the sandbox clock service calls this, after it has fired the timers in the span.
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
