import type { GatewayEvent } from '../eventSocket';
import { chaosChoices, REORDER_HOLD_MAX_MS, STALE_TIMESTAMP_AGE_S, wrongSecret, type ForgedKind, type ListenChaos } from './chaos';
import { forwardEvent, type ForwardResult } from './forwarder';

export type CopyKind = ForgedKind | 'duplicate';
/** What a genuine forward hands back: the printing of its line, run once the ledger has it. */
type Report = (() => void) | void;

/**
 * `listen`'s deliver step with chaos (chaos.ts): forged copies first, then the delay, then the genuine
 * forward (with its retries, `genuine`), then the duplicate. A reordered event is forwarded once the
 * next event has been (at most REORDER_HOLD_MAX_MS), so `deliver` returns without waiting for it; it is
 * in the ledger from then on, and a listener stopped meanwhile does not send it again.
 */
export function chaosDeliver(chaos: ListenChaos, url: string, secret: string, onCopy: (event: GatewayEvent, kind: CopyKind, r: ForwardResult) => void) {
  let held: Array<() => void> = [];
  const releaseHeld = () => {
    const now = held;
    held = [];
    for (const release of now) release();
  };
  const untilNextForwarded = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, REORDER_HOLD_MAX_MS);
      held.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });

  const genuineThenDuplicate = async (event: GatewayEvent, duplicate: boolean, genuine: () => Promise<Report>): Promise<Report> => {
    const report = await genuine();
    releaseHeld();
    if (duplicate) onCopy(event, 'duplicate', await forwardEvent(event, url, secret));
    return report;
  };

  return async (event: GatewayEvent, genuine: () => Promise<Report>): Promise<Report> => {
    const c = chaosChoices(chaos, event.id);
    for (const kind of c.forged) {
      const r = kind === 'bad_signature' ? await forwardEvent(event, url, wrongSecret(chaos, event.id)) : await forwardEvent(event, url, secret, STALE_TIMESTAMP_AGE_S);
      onCopy(event, kind, r);
    }
    if (c.delayMs > 0) await new Promise((r) => setTimeout(r, c.delayMs));
    if (!c.reorder) return genuineThenDuplicate(event, c.duplicate, genuine);
    void untilNextForwarded()
      .then(() => genuineThenDuplicate(event, c.duplicate, genuine))
      .then((report) => report?.());
  };
}
