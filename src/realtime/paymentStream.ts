import { ApiError } from '../errors';
import { findPaymentRecord } from '../domain/payments/paymentService';
import { toPaymentIntentResource, toPublicPaymentView, type PaymentIntentResource } from '../domain/payments/paymentSerializer';
import { isIntentEvent, openIntentFeed } from './intentFeed';
import type { SseConnection } from './sse';

/**
 * One payment intent as server-sent events (GET /payment_intents/{id}/events and its public twin): the
 * SSE framing of the intent feed (intentFeed.ts), as docs/streams.md describes it; the gateway's streams
 * (sse.ts) keep it alive.
 */

export type IntentView = (intent: PaymentIntentResource) => unknown;

// One bus event reaches every stream of its payment with the same `data` object: serialize it once
// per view rather than once per connection.
// eslint-disable-next-line no-restricted-syntax -- keyed by a bus event's data: its serializations, whichever stream asks
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
  const feed = await openIntentFeed({ accountId: src.accountId, paymentId: src.paymentId, loadIntent: src.loadIntent, accepts: isIntentEvent });
  // Only the view outlives this call (src.loadIntent would keep the opening request's objects).
  const view = src.view;

  return {
    attach(conn) {
      const { close, history, intent } = feed;
      conn.onClose(close);
      const sendEvent = (e: { id: string; type: string; data: Record<string, unknown> }) => {
        conn.send({ id: e.id, event: e.type, data: render(view, e.data) });
      };

      conn.send({ id: history.at(-1)?.id, event: 'snapshot', data: JSON.stringify(view(intent)) });
      if (lastEventId) {
        const from = history.findIndex((e) => e.id === lastEventId);
        if (from >= 0) for (const e of history.slice(from + 1)) if (isIntentEvent(e.type)) sendEvent(e);
      }
      feed.start(
        (item) => {
          if (item.kind === 'event' && !conn.isClosed) sendEvent(item.event);
        },
        () => conn.end(),
      );
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
