import { StatusBadge } from '../../components/StatusBadge';
import type { Delivery } from '../../hooks/deliveries';

/**
 * What the endpoint's chaos made of a delivery, in words. Copies (forged or duplicate) are extra requests
 * chaos sent beside the genuine delivery: they are never resent, and a forged copy that the receiver
 * refused is the receiver's success, not a delivery that "gave up".
 */
const COPY_WORDS: Record<string, string> = {
  BAD_SIGNATURE: 'Forged copy (wrong signature) — a good receiver rejects it',
  STALE_TIMESTAMP: 'Forged copy (stale timestamp) — a good receiver rejects it',
  DUPLICATE: 'Duplicate copy — a good receiver handles the event once',
};
/** Chaos on a genuine delivery: it was only held back. */
const GENUINE_WORDS: Record<string, string> = {
  REORDERED: 'Held back by chaos (reordered)',
  DELAYED: 'Delayed by chaos',
};

export const isChaosCopy = (d: Pick<Delivery, 'chaos'>) => d.chaos != null && d.chaos in COPY_WORDS;
const isForged = (d: Pick<Delivery, 'chaos'>) => d.chaos === 'BAD_SIGNATURE' || d.chaos === 'STALE_TIMESTAMP';

/** The label of a delivery chaos touched; null for one sent as usual. */
export function chaosLabel(d: Pick<Delivery, 'chaos'>): string | null {
  if (!d.chaos) return null;
  return COPY_WORDS[d.chaos] ?? GENUINE_WORDS[d.chaos] ?? `Chaos: ${d.chaos.toLowerCase()}`;
}

/**
 * A delivery's outcome as a badge. A forged copy's: rejected (good, as the receiver must) or accepted
 * (a bug of the receiver); a duplicate's: received or refused; a copy not sent yet says so; any other's:
 * its state.
 */
export function DeliveryOutcome({ delivery: d }: { delivery: Pick<Delivery, 'chaos' | 'state' | 'attempts'> }) {
  // A copy is recorded before it is sent (so that no second process sends it too): not sent yet, not refused.
  if (isChaosCopy(d) && d.attempts === 0) {
    return (
      <span className="badge tone-wait" data-status={d.state}>
        Copy not sent yet
      </span>
    );
  }
  if (isForged(d)) {
    const accepted = d.state === 'DELIVERED';
    return (
      <span className={`badge ${accepted ? 'tone-bad' : 'tone-ok'}`} data-status={d.state} data-outcome={accepted ? 'forged-accepted' : 'forged-rejected'}>
        {accepted ? 'Accepted — a bug' : 'Rejected, as it should'}
      </span>
    );
  }
  if (d.chaos === 'DUPLICATE') {
    return (
      <span className="badge tone-info" data-status={d.state}>
        {d.state === 'DELIVERED' ? 'Duplicate received' : 'Duplicate refused'}
      </span>
    );
  }
  return <StatusBadge status={d.state} kind="delivery" />;
}

/** The last attempt's HTTP status in words: 0 means no answer came back. */
export function statusText(status: number | null | undefined): string {
  if (status == null) return '—';
  return status === 0 ? 'no response' : `HTTP ${status}`;
}
