import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAccount, idempotencyKey } from '../support/accounts';
import { ApiClient } from '../support/client';
import { type TestServer } from '../support/server';
import { gql, gqlData, INTENT_FIELDS, until } from './support';
import { sharedGateway } from '../support/server';

/**
 * REST and GraphQL read the same objects through the same services: for each resource, every field
 * REST returns has its camelCase twin in GraphQL with the same value (enum values are the REST value in
 * upper case; `object` is GraphQL's __typename).
 */
let server: TestServer;

beforeAll(async () => {
  server = await sharedGateway();
});
afterAll(async () => {
  await server?.stop();
});

/** REST fields whose GraphQL name is not the plain camelCase one (an object field holds the id). */
const RENAMED: Record<string, string> = { payment_intent: 'paymentIntentId', payment_link: 'paymentLinkCode' };
/** REST fields whose GraphQL type is an enum (the REST value in upper case). */
const ENUM_FIELDS = new Set(['payment_method', 'failure_code', 'methods', 'status', 'state', 'type', 'mode']);

const camel = (key: string) => RENAMED[key] ?? key.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

function expectSameFields(rest: Record<string, unknown>, graphql: Record<string, unknown>, where: string): number {
  let compared = 0;
  for (const [key, restValue] of Object.entries(rest)) {
    if (key === 'object') continue;
    const gqlKey = camel(key);
    expect(Object.prototype.hasOwnProperty.call(graphql, gqlKey), `${where}.${key} has no GraphQL field ${gqlKey}`).toBe(true);
    const gqlValue = graphql[gqlKey];
    compared++;
    if (key === 'metadata' || key === 'data') {
      expect(gqlValue, `${where}.${key}`).toEqual(restValue);
    } else if (restValue !== null && typeof restValue === 'object' && !Array.isArray(restValue)) {
      expect(gqlValue, `${where}.${key}`).not.toBeNull();
      compared += expectSameFields(restValue as Record<string, unknown>, gqlValue as Record<string, unknown>, `${where}.${key}`);
    } else if (ENUM_FIELDS.has(key)) {
      const upper = (v: unknown) => (typeof v === 'string' ? v.toUpperCase() : v);
      expect(gqlValue, `${where}.${key}`).toEqual(Array.isArray(restValue) ? restValue.map(upper) : upper(restValue));
    } else {
      expect(gqlValue, `${where}.${key}`).toEqual(restValue);
    }
  }
  return compared;
}

it('a payment intent, its refund, a payment link (and its QR code), a checkout session, a webhook endpoint and the sandbox clock read the same over REST and GraphQL', async () => {
  const acct = await createAccount(server.baseUrl);
  const api = acct.api;

  // A paid, partly refunded reference intent: fee, reference, amount_refunded and metadata all set.
  const created = await api.post(
    '/payment_intents',
    { amount: 25_000, currency: 'AOA', payment_method: 'multicaixa_reference', merchant_reference: 'order-7', metadata: { order_id: '7', channel: 'web' } },
    { idempotencyKey: idempotencyKey() },
  );
  expect(created.status).toBe(201);
  await api.post('/sandbox/simulate/reference_paid', { reference: created.body.reference.number });
  const refund = await api.post('/refunds', { payment_intent: created.body.id, amount: 5_000 }, { idempotencyKey: idempotencyKey() });
  expect(refund.status).toBe(201);
  await until(async () => (await api.get(`/refunds/${refund.body.id}`)).body.status === 'SUCCEEDED', 20_000);
  // An express intent too: customer set, reference null.
  const express = await api.post(
    '/payment_intents',
    { amount: 1_500, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000003' } },
    { idempotencyKey: idempotencyKey() },
  );

  const link = await api.post('/payment_links', { amount: 7_500, description: 'Camisola oficial', methods: ['multicaixa_express'] });
  const session = await api.post('/checkout/sessions', {
    amount: 32_000,
    merchant_reference: 'order-2001',
    success_url: 'https://shop.example/paid',
    cancel_url: 'https://shop.example/cart',
  });
  const endpoint = await api.post('/webhook_endpoints', { url: 'http://127.0.0.1:9/hook', events: ['payment.succeeded', 'refund.succeeded'], name: 'shop', description: 'orders' });
  expect([link.status, session.status, endpoint.status]).toEqual([201, 201, 201]);
  expect((await api.post('/sandbox/clock/advance', { seconds: 90 })).status).toBe(200);

  const data = await gqlData(
    server.baseUrl,
    acct.sk,
    `query($pay: ID!, $express: ID!, $refund: ID!, $link: ID!, $session: ID!, $endpoint: ID!) {
      paid: paymentIntent(id: $pay) { ${INTENT_FIELDS} }
      express: paymentIntent(id: $express) { ${INTENT_FIELDS} }
      refund(id: $refund) { id paymentIntentId amount status livemode createdAt updatedAt }
      paymentLink(id: $link) { id code url amount currency methods description active livemode createdAt qrSvg }
      checkoutSession(id: $session) { id url amount currency methods status paymentIntentId merchantReference successUrl cancelUrl expiresAt livemode createdAt }
      webhookEndpoints { id url events name description createdAt chaos { seed } mode }
      webhookEndpoint(id: $endpoint) { id url events name description createdAt chaos { seed } mode }
      sandboxClock { now offsetSeconds }
    }`,
    { pay: created.body.id, express: express.body.id, refund: refund.body.id, link: link.body.id, session: session.body.id, endpoint: endpoint.body.id },
  );

  // Read REST after GraphQL; the express intent may move on in between, so it is compared when stable.
  const restPaid = await api.get(`/payment_intents/${created.body.id}`);
  expect(restPaid.body.status).toBe('PARTIALLY_REFUNDED');
  expect(restPaid.body.fee).toBe(500);
  let compared = 0;
  compared += expectSameFields(restPaid.body, data.paid, 'PaymentIntent');
  compared += expectSameFields((await api.get(`/refunds/${refund.body.id}`)).body, data.refund, 'Refund');
  compared += expectSameFields((await api.get(`/payment_links/${link.body.id}`)).body, data.paymentLink, 'PaymentLink');
  // PaymentLink.qrSvg is the body of GET /payment_links/{id}/qr.
  const qr = await api.get(`/payment_links/${link.body.id}/qr`);
  expect(qr.headers.get('content-type')).toContain('image/svg+xml');
  expect(data.paymentLink.qrSvg).toBe(qr.text);
  compared++;
  compared += expectSameFields((await api.get(`/checkout/sessions/${session.body.id}`)).body, data.checkoutSession, 'CheckoutSession');
  const restEndpoints = (await api.get('/webhook_endpoints')).body.data as Array<{ id: string }>;
  expect(data.webhookEndpoints.map((e: { id: string }) => e.id)).toEqual(restEndpoints.map((e) => e.id));
  compared += expectSameFields(restEndpoints[0]!, data.webhookEndpoints[0], 'WebhookEndpoint');
  // webhookEndpoint(id) is the endpoint as GET /webhook_endpoints lists it.
  compared += expectSameFields(restEndpoints.find((e) => e.id === endpoint.body.id)!, data.webhookEndpoint, 'WebhookEndpoint(id)');
  // The clock: the same offset (nothing advanced it in between); `now` moves on with real time.
  const clock = (await api.get('/sandbox/clock')).body;
  expect(data.sandboxClock.offsetSeconds).toBe(clock.offset_seconds);
  expect(clock.offset_seconds).toBe(90);
  expect(Math.abs(Date.parse(data.sandboxClock.now) - Date.parse(clock.now))).toBeLessThan(5_000);
  compared += 2;

  const expressFinal = await until(async () => {
    const r = await api.get(`/payment_intents/${express.body.id}`);
    return r.body.status === 'FAILED' ? r.body : null;
  }, 20_000);
  const gqlExpress = await gqlData(server.baseUrl, acct.sk, `query($id: ID!) { paymentIntent(id: $id) { ${INTENT_FIELDS} } }`, { id: express.body.id });
  compared += expectSameFields(expressFinal, gqlExpress.paymentIntent, 'PaymentIntent(express)');
  expect(gqlExpress.paymentIntent.failureCode).toBe('INSUFFICIENT_FUNDS');

  // Every field of the resources was compared (18 + 3 nested, 7, 10 + QR, 13, 6 + 6, clock 2, and the express intent).
  expect(compared).toBeGreaterThanOrEqual(83);
});

it('lists read the same too: the intents connection against GET /payment_intents, events against GET /events', async () => {
  const acct = await createAccount(server.baseUrl);
  for (let i = 0; i < 3; i++) {
    await acct.api.post('/payment_intents', { amount: 1_000 + i, currency: 'AOA', payment_method: 'multicaixa_reference' }, { idempotencyKey: idempotencyKey() });
  }
  const restList = (await acct.api.get('/payment_intents?limit=2')).body.data as Array<Record<string, unknown>>;
  const page1 = await gqlData(server.baseUrl, acct.sk, `{ paymentIntents(first: 2) { edges { cursor node { ${INTENT_FIELDS} } } pageInfo { hasNextPage hasPreviousPage endCursor } } }`);
  expect(page1.paymentIntents.edges).toHaveLength(2);
  restList.forEach((item, i) => expectSameFields(item, page1.paymentIntents.edges[i].node, `list[${i}]`));
  expect(page1.paymentIntents.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
  const page2 = await gqlData(server.baseUrl, acct.sk, `query($after: String) { paymentIntents(first: 2, after: $after) { nodes { id } pageInfo { hasNextPage hasPreviousPage } } }`, {
    after: page1.paymentIntents.pageInfo.endCursor,
  });
  const restPage2 = (await acct.api.get(`/payment_intents?limit=2&starting_after=${restList[1]!.id}`)).body.data as Array<{ id: string }>;
  expect(page2.paymentIntents.nodes.map((n: { id: string }) => n.id)).toEqual(restPage2.map((p) => p.id));
  expect(page2.paymentIntents.pageInfo).toEqual({ hasNextPage: false, hasPreviousPage: true });

  const restEvents = (await acct.api.get('/events?limit=3')).body.data as Array<Record<string, unknown>>;
  const gqlEvents = await gqlData(server.baseUrl, acct.sk, '{ events(first: 3) { nodes { id type sequence livemode createdAt data } } }');
  expect(gqlEvents.events.nodes).toHaveLength(3);
  restEvents.forEach((e, i) => {
    const g = gqlEvents.events.nodes[i];
    expect(g.type).toBe(String(e.type).toUpperCase().replace(/\./g, '_'));
    expectSameFields({ ...e, type: undefined }, { ...g, type: undefined }, `event[${i}]`);
  });
});

it('a sandbox account created over GraphQL has the fields, types and defaults of one created over REST', async () => {
  const anon = new ApiClient(server.baseUrl);
  const fields = '__typename id name email pk sk livemode createdAt';
  for (const input of [{ name: 'Loja Kianda', email: 'dev@kianda.example' }, {}]) {
    const rest = await anon.post('/sandbox/accounts', input);
    expect(rest.status).toBe(201);
    const res = await gql(server.baseUrl, null, `mutation($input: CreateSandboxAccountInput) { createSandboxAccount(input: $input) { ${fields} } }`, { input });
    expect(res.body.errors).toBeUndefined();
    const graphql = res.body.data.createSandboxAccount as Record<string, unknown>;
    expect(graphql.__typename).toBe('SandboxAccount');
    expect(rest.body.object).toBe('sandbox_account');
    // The same field set, each with the same type; the values that are not fresh ids, keys or times are equal.
    for (const [key, restValue] of Object.entries(rest.body as Record<string, unknown>)) {
      if (key === 'object') continue;
      const gqlKey = camel(key);
      expect(Object.prototype.hasOwnProperty.call(graphql, gqlKey), `SandboxAccount.${key} has no GraphQL field ${gqlKey}`).toBe(true);
      expect(typeof graphql[gqlKey], key).toBe(typeof restValue);
      if (['name', 'email', 'livemode'].includes(key)) expect(graphql[gqlKey], key).toEqual(restValue);
      if (typeof restValue === 'string' && /_/.test(restValue)) expect(String(graphql[gqlKey]).split('_').slice(0, -1), key).toEqual(restValue.split('_').slice(0, -1));
    }
    expect(Object.keys(graphql).filter((k) => k !== '__typename').sort()).toEqual(Object.keys(rest.body).filter((k) => k !== 'object').map(camel).sort());
  }
});
