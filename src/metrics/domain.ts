import { childCache, CounterCells, HistogramCells } from './cells';
import { LATENESS_BUCKETS, register } from './registry';

/** What the domain and the platform observe: payments, timers, webhook attempts, refusals. */

const graphqlOperations = register(new CounterCells('pgw_graphql_operations_total', 'GraphQL operations, by type (query, mutation, subscription) and outcome (ok, error).', ['type', 'outcome']));
/** `type`: query, mutation, subscription, or unknown (not parsed); `outcome`: ok, or error (the answer holds errors). */
export const graphqlOperation = childCache((type: string) => ({
  ok: graphqlOperations.child({ type, outcome: 'ok' }),
  error: graphqlOperations.child({ type, outcome: 'error' }),
}));

const untrustedDocuments = register(
  new CounterCells(
    'pgw_graphql_untrusted_documents_total',
    'GraphQL documents that are not among their account\'s trusted documents, by credential kind and mode (audit: run; enforce: refused).',
    ['credential', 'mode'],
  ),
);
/** `untrustedDocument(credential)(mode).inc()`: credential is secret_key, restricted_key, client_token or dashboard. */
export const untrustedDocument = childCache((credential: string) => childCache((mode: string) => untrustedDocuments.child({ credential, mode })));

const paymentsCreated = register(new CounterCells('pgw_payments_created_total', 'Payment intents created, by method.', ['method']));
export const paymentCreated = childCache((method: string) => paymentsCreated.child({ method }));

const paymentsFinal = register(
  new CounterCells('pgw_payments_final_total', 'Payment intents that reached a final status, by method and that status (a refund of a succeeded payment counts again, under its new status).', ['method', 'status']),
);
/** `paymentFinal(method)(status).inc()`: two lookups, no key built. */
export const paymentFinal = childCache((method: string) => childCache((status: string) => paymentsFinal.child({ method, status })));

const timerLateness = register(
  new HistogramCells('pgw_timer_lateness_seconds', 'How late durable timers fire (fired minus due, on the wall clock); sandbox clock advances not included.', [], LATENESS_BUCKETS),
);
export const timerFired = timerLateness.child({});

const webhookAttempts = register(new CounterCells('pgw_webhook_attempts_total', 'Webhook delivery attempts, by outcome: delivered (2xx), http_error (another status), no_response.', ['outcome']));
export const webhookAttempt = {
  delivered: webhookAttempts.child({ outcome: 'delivered' }),
  http_error: webhookAttempts.child({ outcome: 'http_error' }),
  no_response: webhookAttempts.child({ outcome: 'no_response' }),
};

const webhookLag = register(
  new HistogramCells('pgw_webhook_delivery_lag_seconds', 'From an event\'s creation to the 2xx that delivered it (account time), per delivery.', [], LATENESS_BUCKETS),
);
export const webhookDelivered = webhookLag.child({});

export const webhookDeadLetter = register(new CounterCells('pgw_webhook_dead_letters_total', 'Webhook deliveries that gave up after their last attempt (DEAD_LETTER).', [])).child({});

const rateLimited = register(
  new CounterCells('pgw_rate_limited_total', 'Requests refused with 429, by scope: key, account, ip (public and unauthenticated buckets), session (dashboard sessions), connections (connection caps).', ['scope']),
);
export type RateLimitScope = 'key' | 'account' | 'ip' | 'session' | 'connections';
export const rateLimitedIn = childCache((scope: RateLimitScope) => rateLimited.child({ scope }));

/** Request log entries dropped unwritten (src/domain/logs/requestLogHold.ts): the database did not keep up. */
export const requestLogDropped = register(
  new CounterCells('pgw_request_log_dropped_total', 'Request log entries dropped before they were written: the database did not keep up and the entries held in memory reached their bound.', []),
).child({});
