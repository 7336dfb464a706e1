/* global document, location, fetch, EventSource, URLSearchParams */
// The merchant's page: follows one payment live with a client token minted by its own server
// (server.mjs), never with a secret key. server.mjs bundles this file and graphql-ws with esbuild.
import { createClient } from 'graphql-ws';

const gateway = document.querySelector('meta[name="gateway"]').content;
const query = new URLSearchParams(location.search);
const paymentId = query.get('payment');
// `?via=sse` or `?via=ws` shows one way only; both by default.
const via = query.get('via') ?? 'both';
const FINAL = ['SUCCEEDED', 'FAILED', 'CANCELLED', 'EXPIRED', 'PARTIALLY_REFUNDED', 'REFUNDED'];

function show(list, status) {
  const item = document.createElement('li');
  item.textContent = status;
  document.getElementById(`${list}-statuses`).append(item);
  document.getElementById('status').textContent = status === 'SUCCEEDED' ? 'Paid: SUCCEEDED' : status;
}
const setState = (list, state) => (document.getElementById(`${list}-state`).textContent = state);

async function main() {
  // 1. Ask our own server for a token (it holds the secret key, the page never does).
  const { token } = await (await fetch(`/client-token?payment=${encodeURIComponent(paymentId)}`, { method: 'POST' })).json();

  if (via !== 'ws') followWithEventSource(token);
  if (via !== 'sse') followWithGraphqlWs(token);
}

function followWithEventSource(token) {
  // Server-sent events: the token goes in the query string (EventSource cannot send headers).
  const events = new EventSource(`${gateway}/v1/public/payments/${paymentId}/events?client_token=${token}`);
  events.onopen = () => setState('sse', 'open');
  const onMessage = (e) => {
    const { status } = JSON.parse(e.data);
    show('sse', status);
    // The gateway ends the stream once the payment is final; close so EventSource does not reconnect.
    if (FINAL.includes(status)) {
      events.close();
      setState('sse', 'closed');
    }
  };
  for (const type of ['snapshot', 'payment.succeeded', 'payment.failed', 'payment.unknown', 'payment.reconciled', 'payment.cancelled', 'payment.expired', 'reference.paid']) {
    events.addEventListener(type, onMessage);
  }
  // EventSource sees the snapshot and the events; PENDING → PROCESSING has no event, so a page that
  // must show PROCESSING as it happens uses the subscription below.
}

function followWithGraphqlWs(token) {
  // GraphQL subscription over WebSocket: the token in connection_init.
  const client = createClient({ url: `${gateway.replace(/^http/, 'ws')}/graphql`, connectionParams: { clientToken: token } });
  client.subscribe(
    {
      query: 'subscription($id: ID!) { paymentIntentUpdated(id: $id) { paymentIntent { status failureCode } } }',
      variables: { id: paymentId },
    },
    {
      next: ({ data, errors }) => (errors ? setState('ws', `error: ${errors[0].extensions?.code}`) : show('ws', data.paymentIntentUpdated.paymentIntent.status)),
      error: () => setState('ws', 'error'),
      // The gateway completes a token's subscription once the payment is final.
      complete: () => {
        setState('ws', 'closed');
        client.dispose();
      },
    },
  );
  setState('ws', 'open');
}

main().catch((err) => {
  document.getElementById('status').textContent = `Could not follow the payment: ${err.message}`;
});
