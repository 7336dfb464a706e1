import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import { startTestServer, type TestServer } from '../support/server';
import { collect, wsClient } from '../graphql/support';
import { createPayment, referenceBody } from '../webhooks/support/webhooks';
import { openSse } from './support/sseClient';

/**
 * Issue 16, item 5: streams and sockets could stay open for ever. Each now has a maximum lifetime
 * (SSE_MAX_LIFETIME_SECONDS, WS_MAX_LIFETIME_SECONDS; 1 s here), after which the server ends it and
 * the client resumes: SSE with Last-Event-ID, graphql-ws by reconnecting and subscribing again.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ SSE_MAX_LIFETIME_SECONDS: '1', WS_MAX_LIFETIME_SECONDS: '1' });
});
afterAll(async () => server?.stop());

it('an SSE stream ends at its lifetime, saying so, and resumes with Last-Event-ID', async () => {
  const acct = await createAccount(server.baseUrl);
  // A reference payment stays PENDING: only the lifetime can end its stream.
  const pi = await createPayment(acct.api, referenceBody());
  const url = `${server.baseUrl}/v1/payment_intents/${pi.id}/events`;
  const auth = { authorization: `Bearer ${acct.sk}` };
  const stream = await openSse(url, auth);
  expect(stream.status).toBe(200);
  await stream.ended;
  expect(stream.comments).toContain('stream lifetime reached; reconnect with Last-Event-ID');
  const snapshot = stream.messages.find((m) => m.event === 'snapshot')!;
  expect(snapshot.id).toMatch(/^evt_/);

  const resumed = await openSse(url, { ...auth, 'last-event-id': snapshot.id! });
  expect(resumed.status).toBe(200);
  const [again] = await resumed.waitFor((m) => m.length >= 1);
  expect(again).toMatchObject({ event: 'snapshot', id: snapshot.id });
  resumed.close();
});

it('a graphql-ws socket is closed with 1000 at its lifetime; the client reconnects and its subscription goes on', async () => {
  const acct = await createAccount(server.baseUrl);
  const pi = await createPayment(acct.api, referenceBody());
  const closes: number[] = [];
  const client = wsClient(server.baseUrl, acct.sk, { onClose: (code) => closes.push(code) });
  try {
    // One snapshot per connection: a second one means the client came back and subscribed again.
    const messages = await collect(
      client,
      'subscription($id: ID!) { paymentIntentUpdated(id: $id) { snapshot paymentIntent { id status } } }',
      { id: pi.id },
      (ms) => ms.filter((m) => m.data?.paymentIntentUpdated.snapshot).length >= 2,
    );
    expect(messages.every((m) => !m.errors)).toBe(true);
    expect(messages.map((m) => m.data.paymentIntentUpdated.paymentIntent.id)).toEqual(messages.map(() => pi.id));
    expect(closes[0]).toBe(1000);
  } finally {
    await client.dispose();
  }
});
