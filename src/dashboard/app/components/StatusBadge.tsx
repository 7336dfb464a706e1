/**
 * A status in words a person uses, with the colour as a second cue only. The enum value stays in
 * `data-status` (tests and styles key on it); the words depend on what has the status, as PENDING means
 * "awaiting payment" for a payment and "not sent yet" for a webhook delivery.
 */
export type StatusKind = 'payment' | 'refund' | 'delivery' | 'checkout';

const WORDS: Record<StatusKind, Record<string, string>> = {
  payment: {
    PENDING: 'Awaiting payment',
    PROCESSING: 'Processing',
    UNKNOWN: 'Unknown, reconciling',
    SUCCEEDED: 'Succeeded',
    FAILED: 'Failed',
    CANCELLED: 'Cancelled',
    EXPIRED: 'Expired',
    PARTIALLY_REFUNDED: 'Partially refunded',
    REFUNDED: 'Refunded',
  },
  refund: { PENDING: 'Pending', SUCCEEDED: 'Succeeded' },
  delivery: { PENDING: 'Not sent yet', RETRYING: 'Retrying', DELIVERED: 'Delivered', DEAD_LETTER: 'Gave up' },
  checkout: { OPEN: 'Open', COMPLETED: 'Completed', EXPIRED: 'Expired' },
};

/** Which colour a status takes: good, bad, waiting or neutral. */
const TONE: Record<string, 'ok' | 'bad' | 'wait' | 'info'> = {
  SUCCEEDED: 'ok',
  DELIVERED: 'ok',
  COMPLETED: 'ok',
  FAILED: 'bad',
  DEAD_LETTER: 'bad',
  EXPIRED: 'bad',
  CANCELLED: 'bad',
  PENDING: 'wait',
  PROCESSING: 'wait',
  RETRYING: 'wait',
  UNKNOWN: 'wait',
  OPEN: 'wait',
  PARTIALLY_REFUNDED: 'info',
  REFUNDED: 'info',
};

/** The words for a status; an unknown value (a newer server) is shown as it came. */
export function statusWords(status: string, kind: StatusKind = 'payment'): string {
  return WORDS[kind][status] ?? status;
}

export function StatusBadge({ status, kind = 'payment' }: { status: string; kind?: StatusKind }) {
  return (
    <span className={`badge tone-${TONE[status] ?? 'info'}`} data-status={status}>
      {statusWords(status, kind)}
    </span>
  );
}
