import { ApiError } from '../errors';
import { listEventsForPayment, type EventResource } from '../domain/events';
import { findPaymentRecord } from '../domain/payments/payment.service';
import { isFinalStatus } from '../domain/payments/payment.states';
import { toPaymentIntentResource, toPublicPaymentView, type PaymentIntentResource } from '../domain/payments/payment.serializer';
import { subscribe, type BusEvent } from './eventBus';
import type { SseConnection } from './sse';

/**
 * The life of one payment intent as server-sent events (GET /payment_intents/{id}/events and its
 * public twin):
 *
 * 1. subscribe to the bus first (buffering), then read the payment's stored events, then the intent:
 *    nothing that happens during set-up can fall between the reads and the live feed;
 * 2. `snapshot` (id = the payment's latest event), then, with `Last-Event-ID`, the stored events after
 *    that id, then the live events; every id is sent at most once;
 * 3. close once the intent is in a final state (the state table's FINAL_STATUSES), and the events
 *    that announce it have been sent: `payment.succeeded` after `reference.paid` (both carry the
 *    SUCCEEDED intent), `payment.reconciled` after the late success of an UNKNOWN payment. Refunds
 *    never keep a stream open.
 */
export const KEEP_ALIVE_MS = 15_000;
/** Upper bound on waiting for a follow-up event (payment.succeeded, payment.reconciled) once final. */
const FOLLOW_UP_WAIT_MS = 10_000;

/** Event types whose `data` is the intent, i.e. the ones a payment stream carries. */
export function isIntentEvent(type: string): boolean {
  return type.startsWith('payment.') || type === 'reference.paid';
}

export type IntentView = (intent: PaymentIntentResource) => unknown;

// One bus event reaches every stream of its payment with the same `data` object: serialize it once
// per view rather than once per connection.
const serialized = new WeakMap<object, Map<IntentView, string>>();
function render(view: IntentView, data: Record<string, unknown>): string {
  let byView = serialized.get(data);
  if (!byView) serialized.set(data, (byView = new Map()));
  let text = byView.get(view);
  if (text === undefined) byView.set(view, (text = JSON.stringify(view(data as unknown as PaymentIntentResource))));
  return text;
}

export interface PaymentStreamSource {
  accountId: string;
  paymentId: string;
  /** Reads the current intent (throws ApiError 404 when it is not the caller's). */
  loadIntent(): Promise<PaymentIntentResource>;
  /** What the stream shows of an intent (the full resource, or the public view). */
  view: IntentView;
}

export interface OpenedPaymentStream {
  /** Starts sending on the connection; returns at once. */
  attach(conn: SseConnection): void;
}

/**
 * Subscribes and reads the starting state. Throws (ApiError) before anything is written, so a 404 or
 * a database error is still a normal JSON answer; the caller then opens the SSE connection.
 */
export async function preparePaymentStream(src: PaymentStreamSource, lastEventId?: string): Promise<OpenedPaymentStream> {
  const buffered: BusEvent[] = [];
  let onLive: ((e: BusEvent) => void) | null = null;
  const unsubscribe = subscribe({ accountId: src.accountId, paymentId: src.paymentId }, (e) => {
    if (!isIntentEvent(e.type)) return;
    if (onLive) onLive(e);
    else buffered.push(e);
  });
  let history: EventResource[];
  let intent: PaymentIntentResource;
  try {
    history = await listEventsForPayment(src.accountId, src.paymentId);
    intent = await src.loadIntent();
  } catch (err) {
    unsubscribe();
    throw err;
  }

  return {
    attach(conn) {
      const known = new Set(history.map((e) => e.id));
      let status = intent.status;
      const seen = new Set(history.map((e) => e.type));
      if (status === 'UNKNOWN') seen.add('payment.unknown');
      // Events that always follow another one in the same transition.
      const awaitingFollowUp = () =>
        (seen.has('reference.paid') && !seen.has('payment.succeeded')) || (seen.has('payment.unknown') && !seen.has('payment.reconciled'));
      let followUpTimer: NodeJS.Timeout | null = null;
      const keepAlive = setInterval(() => conn.comment('keep-alive'), KEEP_ALIVE_MS);
      conn.onClose(() => {
        unsubscribe();
        clearInterval(keepAlive);
        if (followUpTimer) clearTimeout(followUpTimer);
      });

      const maybeClose = () => {
        if (!isFinalStatus(status)) return;
        if (awaitingFollowUp()) {
          followUpTimer ??= setTimeout(() => conn.end(), FOLLOW_UP_WAIT_MS);
          return;
        }
        conn.end();
      };
      const sendEvent = (e: { id: string; type: string; data: Record<string, unknown> }) => {
        conn.send({ id: e.id, event: e.type, data: render(src.view, e.data) });
      };

      conn.send({ id: history.at(-1)?.id, event: 'snapshot', data: JSON.stringify(src.view(intent)) });
      if (lastEventId) {
        const from = history.findIndex((e) => e.id === lastEventId);
        if (from >= 0) for (const e of history.slice(from + 1)) if (isIntentEvent(e.type)) sendEvent(e);
      }

      const live = (e: BusEvent) => {
        if (conn.isClosed || known.has(e.id)) return;
        known.add(e.id);
        seen.add(e.type);
        sendEvent(e);
        const s = (e.data as { status?: unknown }).status;
        if (typeof s === 'string') status = s;
        maybeClose();
      };
      for (const e of buffered.splice(0)) live(e);
      onLive = live;
      maybeClose();
    },
  };
}

/**
 * Which payments the public stream shows: those made through a payment link or a checkout session, as
 * the gateway recorded when it created them (`payment_link_id` / `checkout_session_id`, set only by the
 * pages). Never from `metadata`: API callers could store `payment_link` / `checkout_session` there
 * before those keys were refused, and their payments stay private.
 */
export async function loadPublicStreamPayment(paymentId: string): Promise<{ accountId: string; intent: PaymentIntentResource }> {
  const rec = await findPaymentRecord(paymentId);
  const viaPage = rec && (rec.payment_link_id || rec.checkout_session_id);
  if (!rec || !viaPage) throw ApiError.notFound('payment', paymentId);
  return { accountId: rec.account_id, intent: toPaymentIntentResource(rec) };
}

export const fullView: IntentView = (intent) => intent;
export const publicView: IntentView = (intent) => toPublicPaymentView(intent);
