import DataLoader from 'dataloader';
import { EventModel } from '../domain/events/event.model';
import { toEventResource, type EventResource } from '../domain/events/event.serializer';
import { PaymentModel, type PaymentRecord } from '../domain/payments/payment.model';
import { toPaymentIntentResource, type PaymentIntentResource } from '../domain/payments/payment.serializer';
import { toRefundResource, type RefundResource } from '../domain/refunds/refund.serializer';
import { listDeliveries } from '../domain/webhooks/delivery.service';
import type { WebhookDeliveryResource } from '../domain/webhooks/webhook.serializer';

/**
 * Per-request batching for nested lists: a page of 100 intents that asks for their refunds and events
 * makes one query for all refunds and one for all events, not 200. The batch functions are read-only
 * look-ups over the same models, scoped to the caller's account and serialized by the domain's own
 * serializers (the single-item services, e.g. listRefundsForPayment, answer one id per query); they hold
 * no rule of their own. A fresh set per request, so nothing is cached across callers.
 */
export interface Loaders {
  paymentIntent: DataLoader<string, PaymentIntentResource | null>;
  refundsByPayment: DataLoader<string, RefundResource[]>;
  eventsByPayment: DataLoader<string, EventResource[]>;
  deliveriesByEndpoint: DataLoader<string, WebhookDeliveryResource[]>;
}

/**
 * `cache: false` for WebSocket operations: a subscription lives for many messages, and a cached list
 * would show the first message's refunds forever. Batching within one message still applies.
 */
export function createLoaders(accountId: string, opts: { cache: boolean } = { cache: true }): Loaders {
  const options = { cache: opts.cache };
  return {
    paymentIntent: new DataLoader(async (ids) => {
      const docs = await PaymentModel.find({ _id: { $in: [...ids] }, account_id: accountId }, { pending_events: 0 }).lean<PaymentRecord[]>();
      const byId = new Map(docs.map((d) => [d._id, toPaymentIntentResource(d)]));
      return ids.map((id) => byId.get(id) ?? null);
    }, options),
    refundsByPayment: new DataLoader(async (ids) => {
      const docs = await PaymentModel.find({ _id: { $in: [...ids] }, account_id: accountId }, { refunds: 1, livemode: 1 }).lean<PaymentRecord[]>();
      const byId = new Map(docs.map((d) => [d._id, (d.refunds ?? []).map((r) => toRefundResource(r, d._id, d.livemode ?? false))]));
      return ids.map((id) => byId.get(id) ?? []);
    }, options),
    eventsByPayment: new DataLoader(async (ids) => {
      const docs = await EventModel.find({ account_id: accountId, payment_id: { $in: [...ids] } }).sort({ seq: 1 }).lean();
      const byId = new Map<string, EventResource[]>(ids.map((id) => [id, []]));
      for (const d of docs) byId.get(d.payment_id ?? '')?.push(toEventResource(d));
      return ids.map((id) => byId.get(id) ?? []);
    }, options),
    // An account has a handful of endpoints, each listing its last 50 deliveries: one query each, but
    // only once per endpoint per request.
    deliveriesByEndpoint: new DataLoader((ids) => Promise.all(ids.map((id) => listDeliveries(accountId, id))), options),
  };
}
