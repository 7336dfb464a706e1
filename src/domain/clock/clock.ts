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
