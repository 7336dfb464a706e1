// Relay's object identification (issue 56): `node(id:)` and `nodes(ids:)` read every type that
// implements `Node`, by its REST id, through the permission its typed field or REST operation needs.
import { beforeAll, describe, expect, it } from 'vitest';
import { createAccount, idempotencyKey, type TestAccount } from '../support/accounts';
import { sharedGateway, type TestServer } from '../support/server';
import { startReceiver } from '../support/receiver';
import { gql, gqlData } from './support';

let server: TestServer;
let acct: TestAccount;
let other: TestAccount;
/** One object of every Node type, by typename. */
const ids: Record<string, string> = {};

const NODE = `query($id: ID!) { node(id: $id) { __typename id } }`;

beforeAll(async () => {
  server = await sharedGateway();
  acct = await createAccount(server.baseUrl, 'node reader');
  other = await createAccount(server.baseUrl, 'someone else');
  const receiver = await startReceiver();
  const endpoint = await acct.api.post('/webhook_endpoints', { url: receiver.url, events: ['*'] });
  expect(endpoint.status, endpoint.text).toBe(201);
  const intent = await acct.api.post(
    '/payment_intents',
    { amount: 5000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000000' } },
    { idempotencyKey: idempotencyKey() },
  );
  expect(intent.status, intent.text).toBe(201);
  expect((await acct.api.post('/sandbox/clock/advance', { seconds: 10 })).status).toBe(200);
  const refund = await acct.api.post('/refunds', { payment_intent: intent.body.id, amount: 1000 }, { idempotencyKey: idempotencyKey() });
  expect(refund.status, refund.text).toBe(201);
  const link = await acct.api.post('/payment_links', { amount: 7500 });
  const session = await acct.api.post('/checkout/sessions', { amount: 3000 });
  const events = await acct.api.get(`/events?object_id=${intent.body.id}`);
  await receiver.waitFor(() => true, 1, 20_000);
  const deliveries = await acct.api.get(`/webhook_endpoints/${endpoint.body.id}/deliveries`);
  const keys = await acct.api.get('/api_keys');
  await receiver.close();
  Object.assign(ids, {
    Account: acct.id,
    ApiKey: keys.body.data[0].id,
    PaymentIntent: intent.body.id,
    Refund: refund.body.id,
    PaymentLink: link.body.id,
    CheckoutSession: session.body.id,
    WebhookEndpoint: endpoint.body.id,
    WebhookDelivery: deliveries.body.data[0].id,
    Event: events.body.data[0].id,
  });
});

describe('node(id:)', () => {
  it('reads one object of every Node type, as its type, with the fields its typed field gives', async () => {
    expect(Object.keys(ids)).toHaveLength(9);
    for (const [typename, id] of Object.entries(ids)) {
      const data = await gqlData(server.baseUrl, acct.sk, NODE, { id });
      expect(data.node, typename).toEqual({ __typename: typename, id });
    }
    const intent = await gqlData(server.baseUrl, acct.sk, `query($id: ID!) { node(id: $id) { ... on PaymentIntent { amount status refunds { id amount } } } }`, {
      id: ids.PaymentIntent,
    });
    const typed = await gqlData(server.baseUrl, acct.sk, `query($id: ID!) { paymentIntent(id: $id) { amount status refunds { id amount } } }`, { id: ids.PaymentIntent });
    expect(intent.node).toEqual(typed.paymentIntent);
  });

  it("another account's id, an unknown id and an unknown prefix: null, with resource_not_found", async () => {
    for (const id of [ids.PaymentIntent, ids.Event, ids.WebhookDelivery, ids.Account, ids.ApiKey]) {
      const res = await gql(server.baseUrl, other.sk, NODE, { id });
      expect(res.body.data, id).toEqual({ node: null });
      expect(res.body.errors?.map((e) => e.extensions?.code), id).toEqual(['resource_not_found']);
    }
    for (const id of ['pay_000000000000000000000000', 'zz_nothing']) {
      const res = await gql(server.baseUrl, acct.sk, NODE, { id });
      expect(res.body.data, id).toEqual({ node: null });
      expect(res.body.errors?.map((e) => e.extensions?.code), id).toEqual(['resource_not_found']);
    }
  });

  it('needs what the typed field needs: a key without events:read gets permission_denied for an event', async () => {
    const restricted = (await acct.api.post('/api_keys', { name: 'intents only', permissions: ['payment_intents:read'] })).body.secret as string;
    expect((await gqlData(server.baseUrl, restricted, NODE, { id: ids.PaymentIntent })).node).toEqual({ __typename: 'PaymentIntent', id: ids.PaymentIntent });
    for (const id of [ids.Event, ids.WebhookDelivery, ids.Refund, ids.ApiKey]) {
      const res = await gql(server.baseUrl, restricted, NODE, { id });
      expect(res.body.data, id).toEqual({ node: null });
      expect(res.body.errors?.map((e) => e.extensions?.code), id).toEqual(['permission_denied']);
    }
  });
});

describe('nodes(ids:)', () => {
  it('answers in the order asked, null with its error where an id cannot be read', async () => {
    const asked = [ids.Refund, 'pay_000000000000000000000000', ids.PaymentIntent, ids.Event];
    const res = await gql(server.baseUrl, acct.sk, `query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }`, { ids: asked });
    expect(res.body.data?.nodes).toEqual([
      { __typename: 'Refund', id: ids.Refund },
      null,
      { __typename: 'PaymentIntent', id: ids.PaymentIntent },
      { __typename: 'Event', id: ids.Event },
    ]);
    expect(res.body.errors?.map((e) => [e.path, e.extensions?.code])).toEqual([[['nodes', 1], 'resource_not_found']]);
  });

  it('refuses more than 100 ids, and prices what it selects once per id', async () => {
    const many = Array.from({ length: 101 }, () => ids.PaymentIntent);
    const res = await gql(server.baseUrl, acct.sk, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, { ids: many });
    expect(res.body.errors?.[0]?.extensions?.code).toBe('invalid_request');
    expect(res.body.errors?.[0]?.message).toContain('at most 100 ids');
    // 100 nodes × (100 refunds × a few fields): over the cost budget before anything runs.
    const costly = await gql(server.baseUrl, acct.sk, `query($ids: [ID!]!) { nodes(ids: $ids) { ... on PaymentIntent { refunds(first: 100) { id amount status createdAt } } } }`, {
      ids: [ids.PaymentIntent],
    });
    expect(costly.body.errors?.[0]?.message).toMatch(/Query too expensive/);
  });

  it("refetches a client token's own payment (public view only), and nothing else", async () => {
    const token = (await acct.api.post('/client_tokens', { payment_intent: ids.PaymentIntent })).body.token as string;
    const own = await gql(server.baseUrl, token, `query($id: ID!) { node(id: $id) { __typename id ... on PaymentIntent { status amount } } }`, { id: ids.PaymentIntent });
    expect(own.body.errors).toBeUndefined();
    expect(own.body.data.node).toEqual({ __typename: 'PaymentIntent', id: ids.PaymentIntent, status: expect.any(String), amount: 5000 });
    // A field beyond the public view, another object, or several ids: refused before anything runs.
    const beyond = await gql(server.baseUrl, token, `query($id: ID!) { node(id: $id) { ... on PaymentIntent { metadata } } }`, { id: ids.PaymentIntent });
    expect(beyond.body.errors?.[0]?.extensions?.code).toBe('permission_denied');
    const other = await gql(server.baseUrl, token, NODE, { id: ids.Refund });
    expect(other.body.errors?.[0]?.extensions?.code).toBe('authentication_failed');
    const many = await gql(server.baseUrl, token, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, { ids: [ids.PaymentIntent] });
    expect(many.body.errors?.[0]?.extensions?.code).toBe('permission_denied');
  });
});
