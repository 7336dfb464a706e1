import { listEventsForPayment } from '../../domain/events/event.service';
import { getPaymentIntentForAccount } from '../../domain/payments/payment.service';
import type { PaymentIntentResource } from '../../domain/payments/payment.serializer';
import { subscribe, type BusEvent } from '../../realtime/eventBus';
import type { GraphQLContext } from '../context';
import type { PaymentIntentUpdateModel } from '../models';
import { AsyncQueue } from './asyncQueue';
import { SILENT_SOURCES, SILENT_TARGETS, watchIntent } from './intentWatcher';

/**
 * `paymentIntentUpdated(id)`: the intent's current state, then one message per change.
 *
 * Set-up mirrors the SSE stream (realtime/paymentStream.ts): subscribe to the cross-instance bus first
 * (buffering), read the payment's stored events (whose ids are then skipped), read the intent (a 404 for
 * another account's id), send the snapshot, then the buffered and live events. Events whose data is the
 * intent carry it; `refund.succeeded` carries a Refund, so the intent is read again. Changes without an
 * event (PENDING → PROCESSING) come from the intent watcher, with `eventType` null. `updated_at` never
 * goes backwards, so a message older than the last one sent is dropped: the order is the intent's.
 * The subscription stays open (refunds still change a paid intent) until the client ends it.
 */
export async function paymentIntentUpdates(ctx: GraphQLContext, paymentId: string): Promise<AsyncIterableIterator<PaymentIntentUpdateModel>> {
  const accountId = ctx.actor.accountId;
  let buffered: BusEvent[] | null = [];
  let unwatch: (() => void) | null = null;
  const unsubscribe = subscribe({ accountId, paymentId }, (e) => (buffered ? buffered.push(e) : onEvent(e)));
  const queue = new AsyncQueue<PaymentIntentUpdateModel>(() => {
    unsubscribe();
    unwatch?.();
  });

  let known: Set<string>;
  let last: PaymentIntentResource;
  try {
    known = new Set((await listEventsForPayment(accountId, paymentId)).map((e) => e.id));
    last = await getPaymentIntentForAccount(accountId, paymentId);
  } catch (err) {
    unsubscribe();
    throw err;
  }

  // Messages are emitted in order even when one needs a read (refund.succeeded).
  let chain = Promise.resolve();
  const emit = (eventType: string | null, eventId: string | null, intent: PaymentIntentResource) => {
    if (queue.isClosed || intent.updated_at < last.updated_at) return;
    last = intent;
    queue.push({ snapshot: false, eventType, eventId, paymentIntent: intent });
    if (!SILENT_SOURCES.has(intent.status)) stopWatching();
  };
  function onEvent(e: BusEvent): void {
    if (known.has(e.id)) return;
    known.add(e.id);
    chain = chain
      .then(async () => {
        const data = e.data as { object?: unknown };
        const intent = data.object === 'payment_intent' ? (e.data as unknown as PaymentIntentResource) : await getPaymentIntentForAccount(accountId, paymentId);
        emit(e.type, e.id, intent);
      })
      .catch((err: unknown) => queue.fail(err));
  }
  const stopWatching = () => {
    unwatch?.();
    unwatch = null;
  };

  queue.push({ snapshot: true, eventType: null, eventId: null, paymentIntent: last });
  if (SILENT_SOURCES.has(last.status)) {
    unwatch = watchIntent(accountId, paymentId, (intent) => {
      chain = chain.then(() => {
        if (SILENT_TARGETS.has(intent.status) && intent.status !== last.status && intent.updated_at > last.updated_at) emit(null, null, intent);
      });
    });
  }
  for (const e of buffered.splice(0)) onEvent(e);
  buffered = null;
  return queue;
}
