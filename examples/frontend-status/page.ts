// The checkout page's script: shows the payment's status live, with the client token the merchant's
// server put in the page (server.ts), never a secret key, over the transport the page was given
// (config.transport): by default the GraphQL subscription over WebSocket; when it cannot connect (a proxy
// or firewall that blocks it), GraphQL over SSE, then the REST SSE stream.
// server.ts bundles this file (with graphql-ws and graphql-sse's client) with esbuild.
import { createClient, type Client, type FormattedExecutionResult, type Sink } from 'graphql-ws';
import {
  createClient as createSseClient,
  type Client as SseClient,
  type ExecutionResult as SseResult,
  type Sink as SseSink,
} from 'graphql-sse';
import {
  CheckoutPaymentUpdatedDocument,
  type CheckoutPaymentUpdatedSubscription,
  type FailureCode,
  type PaymentIntentStatus,
  type TypedDocumentString,
} from '../../generated/examples/frontend-status';
import type { components } from '../../generated/openapi';
import type { CheckoutConfig } from './config';

/** What the page shows of the payment: the fields its subscription selects. */
type LiveIntent = CheckoutPaymentUpdatedSubscription['paymentIntentUpdated']['paymentIntent'];
/** What the SSE stream sends: the REST public view. */
type PublicIntent = components['schemas']['PublicPaymentIntent'];
type Channel = 'connecting' | 'websocket' | 'graphql-sse' | 'sse' | 'none';
type View = 'waiting' | 'delayed' | 'paid' | 'failed';

/** Every status the schema has: a status added to schema.graphql fails the typecheck until it is placed here. */
const VIEW_OF: Record<PaymentIntentStatus, View> = {
  PENDING: 'waiting',
  PROCESSING: 'waiting',
  UNKNOWN: 'delayed',
  SUCCEEDED: 'paid',
  PARTIALLY_REFUNDED: 'paid',
  REFUNDED: 'paid',
  FAILED: 'failed',
  CANCELLED: 'failed',
  EXPIRED: 'failed',
};

/** The REST spelling of a failure code to the GraphQL one, so both channels feed one LiveIntent. */
const FAILURE_CODE_OF: Record<components['schemas']['FailureCode'], FailureCode> = {
  rejected_by_customer: 'REJECTED_BY_CUSTOMER',
  insufficient_funds: 'INSUFFICIENT_FUNDS',
  provider_unavailable: 'PROVIDER_UNAVAILABLE',
};

const FAILURE_TEXT: Record<FailureCode, string> = {
  REJECTED_BY_CUSTOMER: 'The payment was declined in the Multicaixa Express app.',
  INSUFFICIENT_FUNDS: 'The account did not have enough funds.',
  PROVIDER_UNAVAILABLE: 'Multicaixa Express was not available. No money was taken.',
};

/** The stream's message types that carry an express payment's status (the types are checked against openapi.yaml). */
const STREAM_MESSAGES: Array<'snapshot' | components['schemas']['EventType']> = [
  'snapshot',
  'payment.succeeded',
  'payment.failed',
  'payment.unknown',
  'payment.reconciled',
  'payment.cancelled',
];

/**
 * A WebSocket that has not been acknowledged by then, or a GraphQL over SSE request without its response
 * headers, is taken as blocked (some proxies hold it open, silent).
 */
const CONNECT_TIMEOUT_MS = 10_000;

const config = JSON.parse(element('checkout-config').textContent ?? '{}') as CheckoutConfig;
let final = false;

function element(id: string): HTMLElement {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} is missing from the page`);
  return el;
}

function show(intent: LiveIntent): void {
  if (final) return;
  const view = VIEW_OF[intent.status];
  const checkout = element('checkout');
  checkout.dataset.state = view;
  // The status as last received (absent until the first message): for styling and tests.
  checkout.dataset.status = intent.status;
  const [title, detail] =
    view === 'paid'
      ? ['Payment received', 'Thank you! Your order is confirmed.']
      : view === 'failed'
        ? ['Payment failed', intent.failureCode ? FAILURE_TEXT[intent.failureCode] : `The payment was ${intent.status.toLowerCase()}.`]
        : view === 'delayed'
          ? ['Still waiting for Multicaixa Express', 'Its answer is late. This page updates when it arrives: do not pay again.']
          : ['Confirm the payment in your Multicaixa Express app', 'Open the app on your phone and approve the payment. This page updates by itself.'];
  element('status-title').textContent = title;
  element('status-detail').textContent = detail;
  final = view === 'paid' || view === 'failed';
  element('retry').hidden = view !== 'failed';
}

function setChannel(channel: Channel, text: string): void {
  const el = element('live-channel');
  el.dataset.channel = channel;
  el.textContent = text;
}

function unavailable(): void {
  if (final) return;
  setChannel('none', 'Live updates are unavailable. Reload the page to see the payment status.');
}

/** Sends a typed document: the result and the variables are the types codegen wrote for it. */
function subscribe<TResult, TVariables extends Record<string, unknown>>(
  client: Client,
  document: TypedDocumentString<TResult, TVariables>,
  variables: TVariables,
  sink: Sink<FormattedExecutionResult<TResult>>,
): () => void {
  return client.subscribe<TResult>({ query: document.toString(), variables }, sink);
}

/** A result on either GraphQL transport: shown; with errors or without data, that transport is given up. */
function showOrGiveUp(giveUp: () => void) {
  return ({ data, errors }: { data?: CheckoutPaymentUpdatedSubscription | null; errors?: readonly unknown[] }): void => {
    if (errors?.length || !data) return giveUp();
    show(data.paymentIntentUpdated.paymentIntent);
  };
}

/** subscribe() for graphql-sse's client: the same typed document, the same typed result. */
function subscribeOverSse<TResult, TVariables extends Record<string, unknown>>(
  client: SseClient,
  document: TypedDocumentString<TResult, TVariables>,
  variables: TVariables,
  sink: SseSink<SseResult<TResult, unknown>>,
): () => void {
  return client.subscribe<TResult>({ query: document.toString(), variables }, sink);
}

/** Follows the payment over the GraphQL subscription; calls `fallBack` once if it cannot (or can no longer). */
function followOverWebSocket(fallBack: () => void): void {
  let connected = false;
  let gaveUp = false;
  const giveUp = () => {
    if (gaveUp) return;
    gaveUp = true;
    clearTimeout(timer);
    if (connected) {
      void client.dispose();
    } else {
      // dispose() would wait for a socket that is failing (and reject with its close event), or that hangs:
      // terminate() drops it at once.
      client.terminate();
    }
    if (!final) fallBack();
  };
  const client = createClient({
    url: config.graphqlWsUrl,
    // The token goes in connection_init: the socket is authenticated before any operation runs.
    connectionParams: { clientToken: config.clientToken },
    // A socket that was connected and dropped is retried (graphql-ws's backoff, 5 attempts; each
    // subscription starts with a snapshot, so nothing is missed). One that never connected is blocked:
    // no retry, the next transport at once.
    shouldRetry: () => connected,
    on: {
      connected: () => {
        connected = true;
        clearTimeout(timer);
        setChannel('websocket', 'Live updates over WebSocket.');
      },
      // A socket closed before it was ever acknowledged (refused, or closed by a proxy).
      closed: () => {
        if (!connected) giveUp();
      },
    },
  });
  const timer = setTimeout(() => {
    if (!connected) giveUp();
  }, CONNECT_TIMEOUT_MS);

  subscribe(client, CheckoutPaymentUpdatedDocument, { id: config.paymentId }, {
    next: showOrGiveUp(giveUp),
    error: giveUp,
    // The gateway completes a client token's subscription once the payment is final (giveUp then only
    // closes the socket); completed earlier, the next transport takes over.
    complete: giveUp,
  });
}

/**
 * Follows the payment with GraphQL over SSE (`POST /graphql`, `Accept: text/event-stream`, one stream per
 * operation): the same document and `show()` as the WebSocket, the token in `Authorization` (fetch sends
 * headers, unlike EventSource). Calls `fallBack` once if it cannot.
 */
function followOverGraphqlSse(fallBack: () => void): void {
  let connected = false;
  let gaveUp = false;
  const client = createSseClient({
    url: `${config.gatewayUrl}/graphql`,
    headers: { authorization: `Bearer ${config.clientToken}` },
    // Distinct connections (graphql-sse's default, spelt out): the gateway serves no single-connection mode.
    singleConnection: false,
    // As on the WebSocket: a stream that had connected and dropped is retried (each new one starts with a
    // snapshot); one that never connected is blocked, and throwing here ends the subscription with error.
    retry: async (retries) => {
      if (!connected) throw new Error('GraphQL over SSE never connected');
      await new Promise((resolve) => setTimeout(resolve, 1000 * 2 ** retries));
    },
    on: {
      connected: () => {
        connected = true;
        clearTimeout(timer);
        setChannel('graphql-sse', 'Live updates over GraphQL over SSE.');
      },
    },
  });
  const giveUp = () => {
    if (gaveUp) return;
    gaveUp = true;
    clearTimeout(timer);
    client.dispose();
    if (!final) fallBack();
  };
  const timer = setTimeout(() => {
    if (!connected) giveUp();
  }, CONNECT_TIMEOUT_MS);

  subscribeOverSse(client, CheckoutPaymentUpdatedDocument, { id: config.paymentId }, {
    next: showOrGiveUp(giveUp),
    error: giveUp,
    // The gateway completes the stream once the payment is final; completed earlier, the REST stream.
    complete: giveUp,
  });
}

/** Follows the payment over the SSE stream (the token in the query string: EventSource sends no headers). */
function followOverSse(): void {
  const url = `${config.gatewayUrl}/v1/public/payments/${encodeURIComponent(config.paymentId)}/events?client_token=${encodeURIComponent(config.clientToken)}`;
  const source = new EventSource(url);
  source.addEventListener('open', () => setChannel('sse', 'Live updates over server-sent events.'));
  const onMessage = (message: MessageEvent<string>) => {
    const intent = JSON.parse(message.data) as PublicIntent;
    show({ id: intent.id, status: intent.status, failureCode: intent.failure_code && FAILURE_CODE_OF[intent.failure_code] });
    // The gateway ends the stream once the payment is final; closing stops EventSource reconnecting.
    if (final) source.close();
  };
  for (const type of STREAM_MESSAGES) source.addEventListener(type, onMessage);
  source.addEventListener('error', () => {
    // CONNECTING: EventSource reconnects by itself (with Last-Event-ID). CLOSED: refused (401, 404).
    if (source.readyState === EventSource.CLOSED) unavailable();
  });
}

// Each transport falls back to the next one down: GraphQL over SSE keeps the GraphQL document where only
// WebSockets are blocked; the REST stream is the last, a plain GET that EventSource reconnects by itself.
if (config.transport === 'sse') followOverSse();
else if (config.transport === 'graphql-sse') followOverGraphqlSse(followOverSse);
else followOverWebSocket(() => followOverGraphqlSse(followOverSse));
