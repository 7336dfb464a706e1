import type { EventPage, GatewayEvent } from '../eventSocket';
import type { Ledger } from './ledger';

export interface CatchUpLimits {
  /**
   * How far past the anchor (older events) to keep looking. The gateway orders events by a sequence
   * number taken before the write that makes them visible, so an event can appear in the list a little
   * after a newer one: one missed that way sits just below the anchor and is not in the ledger.
   */
  overlap: number;
  /** Most events read back in one catch-up; past it, only the newest are sent and `truncated` says so. */
  maxScan: number;
}

export const CATCH_UP_LIMITS: CatchUpLimits = { overlap: 20, maxScan: 1000 };

/**
 * The events not yet handed on, oldest first: pages back through the account's events (newest first)
 * to the ledger's anchor and `overlap` beyond it, keeping those that match and the ledger does not know.
 */
export async function collectMissed(
  page: (after: string | null) => Promise<EventPage>,
  ledger: Pick<Ledger, 'anchor' | 'has'>,
  matches: (e: GatewayEvent) => boolean,
  limits: CatchUpLimits = CATCH_UP_LIMITS,
): Promise<{ events: GatewayEvent[]; truncated: boolean }> {
  const found: GatewayEvent[] = [];
  const anchor = ledger.anchor;
  let sawAnchor = false;
  let past = 0;
  let scanned = 0;
  let after: string | null = null;
  for (;;) {
    const { events, hasNextPage, endCursor } = await page(after);
    for (const e of events) {
      scanned++;
      if (sawAnchor) past++;
      else if (e.id === anchor) sawAnchor = true;
      if (past > limits.overlap) return { events: found.reverse(), truncated: false };
      if (!ledger.has(e.id) && matches(e)) found.push(e);
    }
    if (!hasNextPage || !endCursor) return { events: found.reverse(), truncated: false };
    if (scanned >= limits.maxScan) return { events: found.reverse(), truncated: true };
    after = endCursor;
  }
}
