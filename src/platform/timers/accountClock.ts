/**
 * How the timer service reads an account's sandbox clock offset. Accounts and their clocks belong to the
 * domain, which this platform module must not import (docs/architecture.md): the domain's lookup is given
 * to startTimerService (and by the domain's payments core, for a thread that runs no poller). It stays set after the service stops, because work still finishing then (event
 * hooks, a clock advance) may schedule timers.
 */
export type AccountOffsetLookup = (accountId: string) => Promise<number>;

// eslint-disable-next-line no-restricted-syntax -- the domain's one lookup of the database's account clocks: every gateway gives the same
let lookup: AccountOffsetLookup | null = null;

export function useAccountClock(accountOffsetMs: AccountOffsetLookup): void {
  lookup = accountOffsetMs;
}

/** The account's clock offset in ms, as the lookup given at start reads it. */
export function accountOffsetMs(accountId: string): Promise<number> {
  if (!lookup) throw new Error('timer service: no account clock lookup (startTimerService({ accountOffsetMs }) gives it)');
  return lookup(accountId);
}
