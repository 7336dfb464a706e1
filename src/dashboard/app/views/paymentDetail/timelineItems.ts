import type { PaymentDelivery, PaymentDetail } from '../../hooks/paymentDetail';

/**
 * The payment's story in one list, oldest first: each status change, each stored event, each earlier
 * attempt of a webhook delivery (`attemptLog`, the newest 20 the server keeps) and each delivery's state
 * at its latest attempt (its answer or why it failed, and when the next one is due). Status changes come
 * from the events (each carries the intent as it became) and from the live status, for the steps that
 * have no event (PENDING → PROCESSING).
 */
export type TimelineItem =
  | { kind: 'status'; key: string; at: string; status: string; first: boolean }
  | { kind: 'event'; key: string; at: string; eventId: string; eventType: string }
  | { kind: 'attempt'; key: string; at: string; delivery: PaymentDelivery; attempt: PaymentDelivery['attemptLog'][number]; number: number }
  | { kind: 'delivery'; key: string; at: string; delivery: PaymentDelivery };

const KIND_ORDER = { status: 0, event: 1, attempt: 2, delivery: 3 } as const;

export function buildTimeline(intent: PaymentDetail, current: { status: string; updatedAt: string }, deliveries: PaymentDelivery[]): TimelineItem[] {
  const items: TimelineItem[] = [];
  // Every intent is created PENDING (spec); the events say where it went from there.
  let status = 'PENDING';
  items.push({ kind: 'status', key: 'created', at: intent.createdAt, status, first: true });
  for (const e of intent.events.nodes) {
    items.push({ kind: 'event', key: e.id, at: e.createdAt, eventId: e.id, eventType: e.type });
    const next = e.paymentIntent?.status;
    if (next && next !== status) {
      status = next;
      items.push({ kind: 'status', key: `status-${e.id}`, at: e.createdAt, status, first: false });
    }
  }
  if (current.status !== status) items.push({ kind: 'status', key: 'current', at: current.updatedAt, status: current.status, first: false });
  for (const d of deliveries) {
    // The latest attempt is the delivery's own item below; the log holds the newest attempts, so the
    // first one listed is attempt number `attempts - log.length + 1`.
    const log = d.attemptLog;
    log.slice(0, -1).forEach((attempt, i) => {
      const number = d.attempts - log.length + 1 + i;
      items.push({ kind: 'attempt', key: `${d.id}-${number}`, at: attempt.at, delivery: d, attempt, number });
    });
    const event = intent.events.nodes.find((e) => e.id === d.eventId);
    // Not attempted yet: placed at its event, the row says when it is due.
    const at = d.lastAttemptAt ?? event?.createdAt ?? d.nextAttemptAt;
    if (at) items.push({ kind: 'delivery', key: d.id, at, delivery: d });
  }
  // Stable: equal times keep the order above (status, then event, then deliveries).
  return items
    .map((item, i) => ({ item, i }))
    .sort((a, b) => (a.item.at === b.item.at ? KIND_ORDER[a.item.kind] - KIND_ORDER[b.item.kind] || a.i - b.i : a.item.at < b.item.at ? -1 : 1))
    .map(({ item }) => item);
}
