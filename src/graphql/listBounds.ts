import { ACCOUNT_CAPS } from '../domain/accountCaps';
import { API_KEY_LIST_SIZE } from '../domain/accounts/apiKeyService';
import { LINK_LIST_SIZE } from '../domain/links/paymentLinkService';
import { PAYMENT_METHODS } from '../domain/payments/methods';
import { PAYMENT_STATUSES } from '../domain/payments/paymentStates';
import { ATTEMPT_LOG_SIZE } from '../domain/webhooks/webhookDeliveryModel';

/**
 * The most items each GraphQL list of objects can hold. The resolvers never return more (they cut
 * their answer to these), and limits.ts prices whatever sits under a list once per item it may hold, so
 * the cost of an operation is an upper bound of the objects it can make the server build.
 * test/graphql/limits.test.ts checks that every list of objects in schema.graphql is here or takes `first`.
 */

/** Lists without `first`, with the bound that holds them (a cap per account, or the size the list is cut to). */
export const LIST_BOUNDS: Readonly<Record<string, number>> = {
  'Query.paymentMethods': PAYMENT_METHODS.length,
  'Query.paymentLinks': LINK_LIST_SIZE,
  'Query.webhookEndpoints': ACCOUNT_CAPS.webhookEndpoints,
  'Query.apiKeys': API_KEY_LIST_SIZE,
  // One per id asked for, at most 100 (resolvers/Node.ts refuses more).
  'Query.nodes': 100,
  // The documents of one registration: at most the account's cap.
  'Mutation.registerDocuments': ACCOUNT_CAPS.graphqlDocuments,
  // What WebhookEndpoint.deliveries shows: the last 50 deliveries (GET /webhook_endpoints/{id}/deliveries).
  'WebhookEndpoint.deliveries': 50,
  // A delivery's attempts as kept (ATTEMPT_LOG_SIZE), and the headers of one request (7 are sent).
  'WebhookDelivery.attemptLog': ATTEMPT_LOG_SIZE,
  'WebhookDelivery.requestHeaders': 16,
  // The overview's buckets: 24 hourly (LAST_24_HOURS) or 7 daily; a bucket's statuses; the methods.
  'Overview.buckets': 24,
  'WebhookOverview.buckets': 24,
  'OverviewBucket.byStatus': PAYMENT_STATUSES.length,
  'Overview.methods': PAYMENT_METHODS.length,
};

export interface PageBounds {
  min: number;
  max: number;
  default: number;
}

/**
 * The lists of one payment, which have no REST list of their own: `first` 1 to 100, default 20 (a
 * dashboard shows a payment's events and refunds on one page; 20 is more than a payment usually has).
 * Refunds are bounded by the amount and events by the refunds, but neither is small in principle, so
 * the server never returns more than `first`. schema.graphql repeats the defaults.
 */
export const NESTED_PAGES: Readonly<Record<string, PageBounds>> = {
  'PaymentIntent.refunds': { min: 1, max: 100, default: 20 },
  'PaymentIntent.events': { min: 1, max: 100, default: 20 },
  // Deliveries of the payment's events to all endpoints (up to 16 each): 50 covers the usual few events.
  'PaymentIntent.webhookDeliveries': { min: 1, max: 100, default: 50 },
  // Their connections (the plain lists above are deprecated for these): a page of the same size.
  'PaymentIntent.refundsConnection': { min: 1, max: 100, default: 20 },
  'PaymentIntent.eventsConnection': { min: 1, max: 100, default: 20 },
  'PaymentIntent.webhookDeliveriesConnection': { min: 1, max: 100, default: 50 },
  // The dashboard's list of checkout sessions (REST has none to take bounds from): a page like the above.
  'Query.checkoutSessions': { min: 1, max: 100, default: 20 },
  // An endpoint's deliveries on the dashboard's endpoint page: 20 rows a page keep it short on a phone.
  'WebhookEndpoint.deliveriesConnection': { min: 1, max: 100, default: 20 },
};
