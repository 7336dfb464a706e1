// Client tokens (issue 18): what a token reads (one payment's public view, over REST, SSE and GraphQL),
// and what it is refused: other payments, lists, mutations, /v1/events, after expiry and after DELETE.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../support/accounts';
import { ApiClient } from '../support/client';
import type { TestServer } from '../support/server';
import { openSse } from '../streams/support/sseClient';
import { collect, errorCodes, gql } from '../graphql/support';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { createExpressPayment, expectErrorEnvelope, mintToken, PUBLIC_VIEW_FIELDS } from './support';
import { sharedGateway } from '../support/server';

let server: TestServer;
let acct: TestAccount;
let other: TestAccount;
let anon: ApiClient;

beforeAll(async () => {
  server = await sharedGateway();
  acct = await createAccount(server.baseUrl);
  other = await createAccount(server.baseUrl);
  anon = new ApiClient(server.baseUrl);
});
afterAll(async () => server?.stop());

const publicRead = (id: string, token: string) => anon.get(`/public/payments/${id}?client_token=${encodeURIComponent(token)}`);
const PUBLIC_INTENT_SELECTION = 'id amount currency paymentMethod status failureCode reference { entity number expiresAt } amountRefunded livemode createdAt updatedAt';

describe('POST /v1/client_tokens', () => {
  it('mints a ct_test_ token for one payment, expiring after expires_in (default 3600) on the account clock', async () => {
    const payment = await createExpressPayment(acct);
    const res = await acct.api.post('/client_tokens', { payment_intent: payment.id });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ object: 'client_token', payment_intent: payment.id });
    expect(res.body.id).toMatch(/^ctok_[0-9A-Za-z]{24}$/);
    expect(res.body.token).toMatch(/^ct_test_[0-9A-Za-z]{32}$/);
    expect(Date.parse(res.body.expires_at) - Date.parse(res.body.created_at)).toBe(3600_000);
    const short = await mintToken(acct, payment.id, 60);
    expect(short.token).not.toBe(res.body.token);
  });

  it('refuses another account\'s payment (404), out-of-range expires_in (400), a publishable key (403)', async () => {
    const theirs = await createExpressPayment(other);
    expectErrorEnvelope(await acct.api.post('/client_tokens', { payment_intent: theirs.id }), 404, 'resource_not_found');
    const mine = await createExpressPayment(acct);
    expectErrorEnvelope(await acct.api.post('/client_tokens', { payment_intent: mine.id, expires_in: 59 }), 400, 'invalid_request');
    expectErrorEnvelope(await acct.api.post('/client_tokens', { payment_intent: mine.id, expires_in: 86_401 }), 400, 'invalid_request');
    expectErrorEnvelope(await acct.api.post('/client_tokens', { payment_intent: mine.id }, { key: acct.pk }), 403, 'permission_denied');
  });

  it('works with a restricted key holding payment_intents:read, not with one without it', async () => {
    const payment = await createExpressPayment(acct);
    const reader = (await acct.api.post('/api_keys', { name: 'frontend minting', permissions: ['payment_intents:read'] })).body.secret;
    const refunds = (await acct.api.post('/api_keys', { name: 'refunds only', permissions: ['refunds:read'] })).body.secret;
    expect((await acct.api.post('/client_tokens', { payment_intent: payment.id }, { key: reader })).status).toBe(201);
    expectErrorEnvelope(await acct.api.post('/client_tokens', { payment_intent: payment.id }, { key: refunds }), 403, 'permission_denied');
  });
});

describe('what a token reads', () => {
  it('GET /v1/public/payments/{id}: exactly the public view of its payment, with CORS', async () => {
    const payment = await createExpressPayment(acct);
    const { token } = await mintToken(acct, payment.id);
    const res = await anon.get(`/public/payments/${payment.id}?client_token=${token}`, { headers: { origin: 'https://shop.example' } });
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(PUBLIC_VIEW_FIELDS);
    expect(res.body).toMatchObject({ id: payment.id, amount: 15_000, status: payment.status });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    expect(res.headers.get('x-ratelimit-limit')).toBe('120');
  });

  it('the SSE stream of any payment of the account (not only page payments), public view only', async () => {
    const payment = await createExpressPayment(acct);
    const { token } = await mintToken(acct, payment.id);
    // Without a token an API payment has no public stream.
    expectErrorEnvelope(await anon.get(`/public/payments/${payment.id}/events`), 404, 'resource_not_found');
    const sse = await openSse(`${server.baseUrl}/v1/public/payments/${payment.id}/events?client_token=${token}`, { origin: 'https://shop.example' });
    expect(sse.status, sse.text).toBe(200);
    expect(sse.headers.get('access-control-allow-origin')).toBe('*');
    await sse.waitFor((m) => m.length >= 1);
    sse.close();
    const snapshot = JSON.parse(sse.messages[0]!.data);
    expect(sse.messages[0]!.event).toBe('snapshot');
    expect(Object.keys(snapshot).sort()).toEqual(PUBLIC_VIEW_FIELDS);
  });

  it('GraphQL paymentIntent(id) over HTTP with Authorization: Bearer ct_test_', async () => {
    const payment = await createExpressPayment(acct);
    const { token } = await mintToken(acct, payment.id);
    const res = await gql(server.baseUrl, token, `query($id: ID!) { paymentIntent(id: $id) { __typename ${PUBLIC_INTENT_SELECTION} } }`, { id: payment.id });
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.paymentIntent).toMatchObject({ id: payment.id, amount: 15_000, paymentMethod: 'MULTICAIXA_EXPRESS', reference: null });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    // Through a fragment, too.
    const viaFragment = await gql(server.baseUrl, token, `query { paymentIntent(id: "${payment.id}") { ...F } } fragment F on PaymentIntent { id status }`);
    expect(viaFragment.body.data.paymentIntent.id).toBe(payment.id);
  });

  it('the subscription over graphql-ws with connection_init {clientToken}: public view, completes when final', async () => {
    const payment = await createExpressPayment(acct);
    const { token } = await mintToken(acct, payment.id);
    const client = createClient({ url: `${server.baseUrl.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { clientToken: token }, retryAttempts: 0, lazy: true });
    try {
      const messages = await new Promise<any[]>((resolve, reject) => {
        const out: any[] = [];
        client.subscribe(
          { query: `subscription($id: ID!) { paymentIntentUpdated(id: $id) { snapshot eventType paymentIntent { ${PUBLIC_INTENT_SELECTION} } } }`, variables: { id: payment.id } },
          { next: (m) => out.push(m), error: reject, complete: () => resolve(out) },
        );
      });
      expect(messages.every((m) => !m.errors)).toBe(true);
      const statuses = messages.map((m) => m.data.paymentIntentUpdated.paymentIntent.status);
      expect(statuses).toContain('PROCESSING');
      expect(statuses.at(-1)).toBe('SUCCEEDED');
    } finally {
      await client.dispose();
    }
  }, 60_000);
});

describe('what a token is refused', () => {
  let payment: any;
  let token: string;
  let second: any;
  beforeAll(async () => {
    payment = await createExpressPayment(acct);
    second = await createExpressPayment(acct);
    token = (await mintToken(acct, payment.id)).token;
  });

  it('another payment of the same account: 401 on the read, the stream and GraphQL', async () => {
    expectErrorEnvelope(await publicRead(second.id, token), 401, 'authentication_failed');
    expectErrorEnvelope(await anon.get(`/public/payments/${second.id}/events?client_token=${token}`), 401, 'authentication_failed');
    const res = await gql(server.baseUrl, token, `query { paymentIntent(id: "${second.id}") { id } }`);
    expect(res.status).toBe(401);
    expect(errorCodes(res)).toEqual(['authentication_failed']);
  });

  it('lists, mutations, /v1/events and every key route: 403 permission_denied', async () => {
    const asBearer = anon.withKey(token);
    expectErrorEnvelope(await asBearer.get('/payment_intents'), 403, 'permission_denied');
    expectErrorEnvelope(await asBearer.get('/events'), 403, 'permission_denied');
    expectErrorEnvelope(await asBearer.get(`/payment_intents/${payment.id}`), 403, 'permission_denied');
    expectErrorEnvelope(await asBearer.post(`/payment_intents/${payment.id}/cancel`), 403, 'permission_denied');
    expectErrorEnvelope(await anon.get(`/events?client_token=${token}`), 403, 'permission_denied');
    expectErrorEnvelope(await asBearer.post('/client_tokens', { payment_intent: payment.id }), 403, 'permission_denied');
    // Key routes answer no CORS to a token: only the token routes do.
    const events = await asBearer.get('/events', { headers: { origin: 'https://shop.example' } });
    expect(events.headers.get('access-control-allow-origin')).toBeNull();

    const list = await gql(server.baseUrl, token, '{ paymentIntents { nodes { id } } }');
    expect([list.status, errorCodes(list)]).toEqual([403, ['permission_denied']]);
    const events2 = await gql(server.baseUrl, token, '{ events { nodes { id } } }');
    expect([events2.status, errorCodes(events2)]).toEqual([403, ['permission_denied']]);
    const cancel = await gql(server.baseUrl, token, `mutation { cancelPaymentIntent(id: "${payment.id}") { id } }`);
    expect([cancel.status, errorCodes(cancel)]).toEqual([403, ['permission_denied']]);
    const mint = await gql(server.baseUrl, token, `mutation { createClientToken(input: {paymentIntent: "${payment.id}"}) { token } }`);
    expect([mint.status, errorCodes(mint)]).toEqual([403, ['permission_denied']]);
  });

  it('fields beyond the public view: 403, nothing returned', async () => {
    for (const field of ['customer { mobile }', 'metadata', 'fee', 'feeVersion', 'apiKeyId', 'merchantReference', 'refunds { id }', 'events { id }']) {
      const res = await gql(server.baseUrl, token, `query { paymentIntent(id: "${payment.id}") { id ${field} } }`);
      expect([res.status, errorCodes(res)], field).toEqual([403, ['permission_denied']]);
      expect(res.body.data, field).toBeUndefined();
    }
    const hidden = await gql(server.baseUrl, token, `query { paymentIntent(id: "${payment.id}") { id ...F } } fragment F on PaymentIntent { metadata }`);
    expect(errorCodes(hidden)).toEqual(['permission_denied']);
    const introspection = await gql(server.baseUrl, token, '{ __schema { types { name } } }');
    expect(errorCodes(introspection)).toEqual(['permission_denied']);
  });

  it('over graphql-ws: another payment or a query beyond the view is refused; a bad token closes with 4401', async () => {
    const client = createClient({ url: `${server.baseUrl.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { clientToken: token }, retryAttempts: 0, lazy: true });
    try {
      const [otherPayment] = await collect(client, 'subscription($id: ID!) { paymentIntentUpdated(id: $id) { snapshot } }', { id: second.id }, (m) => m.length > 0);
      expect(otherPayment!.errors?.[0]?.extensions?.code).toBe('authentication_failed');
      const [events] = await collect(client, 'subscription { events { id } }', {}, (m) => m.length > 0);
      expect(events!.errors?.[0]?.extensions?.code).toBe('permission_denied');
    } finally {
      await client.dispose();
    }
    const closed = await new Promise<number>((resolve) => {
      const bad = createClient({
        url: `${server.baseUrl.replace(/^http/, 'ws')}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: { clientToken: 'ct_test_' + 'A'.repeat(32) },
        retryAttempts: 0,
        on: { closed: (e) => resolve((e as { code: number }).code) },
      });
      bad.subscribe({ query: `subscription { paymentIntentUpdated(id: "${payment.id}") { snapshot } }` }, { next: () => undefined, error: () => undefined, complete: () => undefined });
    });
    expect(closed).toBe(4401);
  });

  it('after expiry (expires_in 60, the account clock advanced past it): 401', async () => {
    const p = await createExpressPayment(acct);
    const short = await mintToken(acct, p.id, 60);
    expect((await publicRead(p.id, short.token)).status).toBe(200);
    expect((await acct.api.post('/sandbox/clock/advance', { seconds: 61 })).status).toBe(200);
    expectErrorEnvelope(await publicRead(p.id, short.token), 401, 'authentication_failed');
    expectErrorEnvelope(await anon.get(`/public/payments/${p.id}/events?client_token=${short.token}`), 401, 'authentication_failed');
    expect(errorCodes(await gql(server.baseUrl, short.token, `{ paymentIntent(id: "${p.id}") { id } }`))).toEqual(['authentication_failed']);
  });

  it('after DELETE /v1/client_tokens/{id}: 401 (and a second DELETE is 404)', async () => {
    const p = await createExpressPayment(acct);
    const minted = await mintToken(acct, p.id);
    expect((await publicRead(p.id, minted.token)).status).toBe(200);
    expectErrorEnvelope(await other.api.delete(`/client_tokens/${minted.id}`), 404, 'resource_not_found');
    const deleted = await acct.api.delete(`/client_tokens/${minted.id}`);
    expect([deleted.status, deleted.body]).toEqual([200, { id: minted.id, object: 'client_token', deleted: true }]);
    expectErrorEnvelope(await publicRead(p.id, minted.token), 401, 'authentication_failed');
    expect(errorCodes(await gql(server.baseUrl, minted.token, `{ paymentIntent(id: "${p.id}") { id } }`))).toEqual(['authentication_failed']);
    expectErrorEnvelope(await acct.api.delete(`/client_tokens/${minted.id}`), 404, 'resource_not_found');
  });

  it('fuzzed tokens: 401 in the error envelope, never a 5xx, never echoed', async () => {
    const theirs = await createExpressPayment(other);
    const theirToken = (await mintToken(other, theirs.id)).token;
    const fuzzed = [
      ['wrong prefix', token.replace('ct_test_', 'ct_live_')],
      ['a key prefix', token.replace('ct_test_', 'sk_test_')],
      ['truncated', token.slice(0, -1)],
      ['empty', ''],
      ['one character more', `${token}A`],
      ['another account', theirToken],
      ['unicode', `ct_test_${'é'.repeat(32)}`],
      ['unicode lookalike', token.slice(0, -1) + 'Ａ'],
      ['very long', `ct_test_${'A'.repeat(5000)}`],
      ['null byte', `${token.slice(0, -1)}\u0000`],
    ];
    for (const [what, value] of fuzzed) {
      const q = encodeURIComponent(value!);
      for (const res of [await anon.get(`/public/payments/${payment.id}?client_token=${q}`), await anon.get(`/public/payments/${payment.id}/events?client_token=${q}`)]) {
        expectErrorEnvelope(res, 401, 'authentication_failed');
        expect(res.text, what).not.toContain(value!.slice(8, 40) || '\u0000never');
      }
      if (/^[\x21-\x7e]*$/.test(value!) && value!.length > 0 && value!.length < 1000) {
        const g = await gql(server.baseUrl, value!, `{ paymentIntent(id: "${payment.id}") { id } }`);
        expect([g.status, errorCodes(g)], what).toEqual([401, ['authentication_failed']]);
      }
    }
    // Repeated parameter: no single token.
    expectErrorEnvelope(await anon.get(`/public/payments/${payment.id}?client_token=${token}&client_token=${token}`), 401, 'authentication_failed');
  });

  it('a token counts in its own window (X-RateLimit-* of the token, shared by REST and GraphQL)', async () => {
    const p = await createExpressPayment(acct);
    const { token: t } = await mintToken(acct, p.id);
    const first = await publicRead(p.id, t);
    const second2 = await gql(server.baseUrl, t, `{ paymentIntent(id: "${p.id}") { id } }`);
    expect(Number(first.headers.get('x-ratelimit-remaining'))).toBe(119);
    expect(Number(second2.headers.get('x-ratelimit-remaining'))).toBe(118);
  });
});

describe('CORS', () => {
  it('preflights of the token routes and /graphql are answered; key requests get no CORS headers', async () => {
    const pre = await fetch(`${server.baseUrl}/graphql`, {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-headers')).toBe('Authorization,Content-Type,Last-Event-ID');
    expect(pre.headers.get('access-control-allow-methods')).toContain('POST');
    const sse = await fetch(`${server.baseUrl}/v1/public/payments/pay_000000000000000000000000/events`, {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'last-event-id' },
    });
    expect([sse.status, sse.headers.get('access-control-allow-origin')]).toEqual([204, '*']);
    const withKey = await gql(server.baseUrl, acct.sk, '{ account { id } }');
    expect(withKey.headers.get('access-control-allow-origin')).toBeNull();
    const keyRoute = await acct.api.get('/account', { headers: { origin: 'https://shop.example' } });
    expect(keyRoute.headers.get('access-control-allow-origin')).toBeNull();
  });
});
