import { REORDER_HOLD_MAX_MS, type ChaosPlan } from './chaos';

/**
 * The waits chaos puts before a genuine delivery's first attempt: `delay_ms`, and for a reordered one until
 * another delivery of its endpoint is sent (at most REORDER_HOLD_MAX_MS). A held delivery waits in the
 * database with a durable timer, so it costs no memory and survives a restart; whoever releases it claims it
 * first, so it is sent once. Early releases are heard in this process only and bounded (EARLY_RELEASES);
 * beyond, the timer releases it. More: docs/decisions/notes/webhooks.md, "Chaos holds".
 */
export const HOLD_TIMER_KIND = 'webhook.hold';
export const EARLY_RELEASES = { perAccount: 256, total: 8_192 } as const;

interface Registered {
  accountId: string;
  /** Wall-clock ms before which it stays held (its `delay_ms`, which comes first). */
  notBefore: number;
  release: () => void;
}

// Shared by the gateways of a process: a reordered delivery waits for a send to its endpoint by anyone.
// eslint-disable-next-line no-restricted-syntax -- early releases per endpoint of the database, bounded (see above)
const waiting = new Map<string, Map<string, Registered>>();
// eslint-disable-next-line no-restricted-syntax -- the per-account counts of `waiting`, for its bound
const perAccount = new Map<string, number>();
// The total of `waiting`, for its bound.
const registrations = { total: 0 };

function forget(endpointId: string, deliveryId: string): void {
  const held = waiting.get(endpointId);
  const r = held?.get(deliveryId);
  if (!held || !r) return;
  held.delete(deliveryId);
  if (held.size === 0) waiting.delete(endpointId);
  registrations.total--;
  const n = (perAccount.get(r.accountId) ?? 1) - 1;
  if (n > 0) perAccount.set(r.accountId, n);
  else perAccount.delete(r.accountId);
}

/** Registers the early release of a reordered delivery; false when the bound leaves it to its timer. */
export function releaseOnNextSend(endpointId: string, deliveryId: string, accountId: string, notBefore: number, release: () => void): boolean {
  if (registrations.total >= EARLY_RELEASES.total || (perAccount.get(accountId) ?? 0) >= EARLY_RELEASES.perAccount) return false;
  let held = waiting.get(endpointId);
  if (!held) waiting.set(endpointId, (held = new Map()));
  held.set(deliveryId, { accountId, notBefore, release });
  registrations.total++;
  perAccount.set(accountId, (perAccount.get(accountId) ?? 0) + 1);
  // Its timer releases it at the latest; the entry goes then at the latest too.
  setTimeout(() => forget(endpointId, deliveryId), notBefore - Date.now() + REORDER_HOLD_MAX_MS).unref();
  return true;
}

/** Called after every genuine attempt's request: the endpoint's reordered deliveries past their delay may go. */
export function endpointSent(endpointId: string): void {
  const held = waiting.get(endpointId);
  if (!held) return;
  const now = Date.now();
  for (const [deliveryId, r] of [...held]) {
    if (r.notBefore > now) continue;
    forget(endpointId, deliveryId);
    r.release();
  }
}

/** The endpoint was deleted: its registrations go (their deliveries went with it). */
export function forgetEndpointHolds(endpointId: string): void {
  for (const deliveryId of [...(waiting.get(endpointId)?.keys() ?? [])]) forget(endpointId, deliveryId);
}

/** The longest the plan holds the first attempt (its timer's delay, and the lease's extra length). */
export function holdMs(plan: ChaosPlan | null | undefined): number {
  return plan ? plan.delay_ms + (plan.reorder ? REORDER_HOLD_MAX_MS : 0) : 0;
}
