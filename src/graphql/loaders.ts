import DataLoader from 'dataloader';
import type { EventResource } from '../domain/events/eventSerializer';
import { listEventsForPayments } from '../domain/events/eventService';
import type { PaymentRecord } from '../domain/payments/paymentModel';
import { toPaymentIntentResource, type PaymentIntentResource } from '../domain/payments/paymentSerializer';
import { readPaymentsOfAccount } from '../domain/payments/paymentService';
import type { RefundResource } from '../domain/refunds/refundSerializer';
import { refundsOf } from '../domain/refunds/refundService';
import { listDeliveries } from '../domain/webhooks/deliveryService';
import { listDeliveriesForPayments, type EndpointDelivery } from '../domain/webhooks/paymentDeliveries';
import { deliveryAttempts, type DeliveryAttempts } from '../domain/webhooks/endpointDeliveries';

/**
 * Per-request batching for nested lists: a page of 100 intents that asks for their refunds and events
 * makes one query for all refunds and one for all events, not 200. The batch reads are the domain
 * services' own (scoped to the caller's account); loaders only line their answers up with the keys.
 * A fresh set per request, so nothing is cached across callers.
 */
export interface Loaders {
  /**
   * The account's stored intent (null: none, or another account's). One read serves the intent and its
   * refunds, which live inside it; Query.paymentIntent starts it before execute() checks and serializes.
   */
  paymentRecord: DataLoader<string, PaymentRecord | null>;
  paymentIntent: DataLoader<string, PaymentIntentResource | null>;
  refundsByPayment: DataLoader<string, RefundResource[]>;
  eventsByPayment: DataLoader<string, EventResource[]>;
  deliveriesByEndpoint: DataLoader<string, EndpointDelivery[]>;
  deliveriesByPayment: DataLoader<string, EndpointDelivery[]>;
  /** A delivery's every attempt and last request headers (null: not the account's). */
  deliveryAttempts: DataLoader<string, DeliveryAttempts | null>;
}

/**
 * `cache: false` for WebSocket operations: a subscription lives for many messages, and a cached list
 * would show the first message's refunds forever. Batching within one message still applies.
 */
export function createLoaders(accountId: string, opts: { cache: boolean } = { cache: true }): Loaders {
  const options = { cache: opts.cache };
  const paymentRecord = new DataLoader<string, PaymentRecord | null>((ids) => readPaymentsOfAccount(accountId, ids), options);
  /** What each stored intent gives, an intent that failed to read failing its key alone. */
  const fromRecords = <T>(make: (p: PaymentRecord | null) => T) => async (ids: readonly string[]) =>
    (await paymentRecord.loadMany(ids)).map((p) => (p instanceof Error ? p : make(p)));
  return {
    paymentRecord,
    paymentIntent: new DataLoader(fromRecords((p) => (p ? toPaymentIntentResource(p) : null)), options),
    refundsByPayment: new DataLoader(fromRecords((p) => (p ? refundsOf(p) : [])), options),
    eventsByPayment: new DataLoader(async (ids) => {
      const byId = await listEventsForPayments(accountId, ids);
      return ids.map((id) => byId.get(id) ?? []);
    }, options),
    // An account has a handful of endpoints, each listing its last 50 deliveries: one query each, but
    // only once per endpoint per request.
    deliveriesByEndpoint: new DataLoader(
      (ids) => Promise.all(ids.map(async (id) => (await listDeliveries(accountId, id)).map((d) => ({ ...d, endpoint_id: id })))),
      options,
    ),
    deliveriesByPayment: new DataLoader(async (ids) => {
      const byId = await listDeliveriesForPayments(accountId, ids);
      return ids.map((id) => byId.get(id) ?? []);
    }, options),
    deliveryAttempts: new DataLoader(async (ids) => {
      const byId = await deliveryAttempts(accountId, ids);
      return ids.map((id) => byId.get(id) ?? null);
    }, options),
  };
}
