import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import { startTestServer, type TestServer } from '../support/server';
import { waitFor } from '../support/wait';
import { createPayment, referenceBody } from '../webhooks/support/webhooks';
import { openSocket, type RawSocket } from './rawSocket';

/**
 * Issue 16, item 5: graphql-ws connections and subscriptions had no caps. Small caps here (env): the
 * one over a cap is refused the way a client library surfaces best for what is known at that point.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    WS_MAX_CONNECTIONS_PER_IP: '3',
    WS_MAX_CONNECTIONS_PER_KEY: '2',
    WS_MAX_SUBSCRIPTIONS_PER_CONNECTION: '2',
    WS_MAX_SUBSCRIPTIONS_PER_KEY: '3',
  });
});
afterAll(async () => server?.stop());

const open: RawSocket[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) s.ws.close();
  // The server frees the places when it sees the sockets end.
  await waitFor(async () => server.gateway.realtime.connections.openCounts().ws, (n) => n === 0);
});

async function connect(key: string): Promise<RawSocket> {
  const opened = await openSocket(server.baseUrl, key);
  if (!opened.ok) throw new Error(`refused: ${JSON.stringify(opened)}`);
  open.push(opened.socket);
  return opened.socket;
}

const EVENTS = 'subscription { events { id } }';

it('per key: the third socket of a key is closed with 4429 after connection_init; another key may still connect', async () => {
  const acct = await createAccount(server.baseUrl);
  const other = await createAccount(server.baseUrl);
  await connect(acct.sk);
  await connect(acct.sk);
  const third = await openSocket(server.baseUrl, acct.sk);
  expect(third).toMatchObject({ ok: false, code: 4429 });
  expect(third.ok === false && third.reason).toContain('rate_limit_exceeded');
  await connect(other.sk);
});

it('per IP: the upgrade over the cap is refused with HTTP 429, Retry-After and the error envelope', async () => {
  const keys = await Promise.all([0, 1, 2, 3].map(() => createAccount(server.baseUrl)));
  for (const k of keys.slice(0, 3)) await connect(k.sk);
  const refused = await openSocket(server.baseUrl, keys[3]!.sk);
  expect(refused).toMatchObject({ ok: false, status: 429 });
  const body = JSON.parse((refused as { body: string }).body);
  expect(body.error.code).toBe('rate_limit_exceeded');
  expect(body.error.request_id).toMatch(/^req_/);
});

it('subscriptions per socket and per key: the one over is refused with the GraphQL error rate_limit_exceeded', async () => {
  const acct = await createAccount(server.baseUrl);
  const a = await connect(acct.sk);
  a.subscribe('1', EVENTS);
  a.subscribe('2', EVENTS);
  a.subscribe('3', EVENTS);
  const overSocket = await a.firstMessage('3');
  expect(overSocket.type).toBe('error');
  expect(overSocket.payload[0].extensions.code).toBe('rate_limit_exceeded');

  const b = await connect(acct.sk);
  b.subscribe('1', EVENTS);
  b.subscribe('2', EVENTS);
  const overKey = await b.firstMessage('2');
  expect(overKey.type).toBe('error');
  expect(overKey.payload[0].extensions.code).toBe('rate_limit_exceeded');
  expect(overKey.payload[0].message).toContain('for this API key');

  // A socket's end frees its subscriptions' places: the key may subscribe again.
  a.ws.close();
  await waitFor(async () => server.gateway.realtime.connections.openCounts().ws, (n) => n === 1);
  const pi = await createPayment(acct.api, referenceBody());
  b.subscribe('3', 'subscription($id: ID!) { paymentIntentUpdated(id: $id) { snapshot } }', { id: pi.id });
  expect((await b.firstMessage('3')).type).toBe('next');
});
