// A payment's nested lists as Relay connections (issue 56): refundsConnection, eventsConnection and
// webhookDeliveriesConnection page with `first` and `after`, in the order of the plain lists they
// replace, which stay and are marked @deprecated naming them.
import { beforeAll, describe, expect, it } from 'vitest';
import { createAccount, idempotencyKey, type TestAccount } from '../support/accounts';
import { startReceiver } from '../support/receiver';
import { sharedGateway, type TestServer } from '../support/server';
import { gql, gqlData } from './support';

let server: TestServer;
let acct: TestAccount;
let paymentId: string;

beforeAll(async () => {
  server = await sharedGateway();
  acct = await createAccount(server.baseUrl, 'nested connections');
  const receiver = await startReceiver();
  expect((await acct.api.post('/webhook_endpoints', { url: receiver.url, events: ['*'] })).status).toBe(201);
  const intent = await acct.api.post(
    '/payment_intents',
    { amount: 9000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000000' } },
    { idempotencyKey: idempotencyKey() },
  );
  expect(intent.status, intent.text).toBe(201);
  paymentId = intent.body.id;
  expect((await acct.api.post('/sandbox/clock/advance', { seconds: 10 })).status).toBe(200);
  for (const amount of [1000, 2000, 3000]) {
    const refund = await acct.api.post('/refunds', { payment_intent: paymentId, amount }, { idempotencyKey: idempotencyKey() });
    expect(refund.status, refund.text).toBe(201);
  }
  // Each refund succeeds ~3 s later (refund.succeeded): five events in all.
  expect((await acct.api.post('/sandbox/clock/advance', { seconds: 10 })).status).toBe(200);
  await receiver.close();
});

const PAGE = `query($id: ID!, $first: Int, $after: String) {
  paymentIntent(id: $id) {
    refundsConnection(first: $first, after: $after) { edges { cursor node { id amount } } nodes { id } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }
  }
}`;

describe('PaymentIntent.refundsConnection', () => {
  it('pages through the refunds oldest first, as the deprecated refunds list orders them', async () => {
    const first = (await gqlData(server.baseUrl, acct.sk, PAGE, { id: paymentId, first: 2 })).paymentIntent.refundsConnection;
    expect(first.edges.map((e: any) => e.node.amount)).toEqual([1000, 2000]);
    expect(first.edges.map((e: any) => e.cursor)).toEqual(first.nodes.map((n: any) => n.id));
    expect(first.pageInfo).toEqual({ hasNextPage: true, hasPreviousPage: false, startCursor: first.nodes[0].id, endCursor: first.nodes[1].id });

    const second = (await gqlData(server.baseUrl, acct.sk, PAGE, { id: paymentId, first: 2, after: first.pageInfo.endCursor })).paymentIntent.refundsConnection;
    expect(second.edges.map((e: any) => e.node.amount)).toEqual([3000]);
    expect(second.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });

    const plain = (await gqlData(server.baseUrl, acct.sk, `query($id: ID!) { paymentIntent(id: $id) { refunds { id } } }`, { id: paymentId })).paymentIntent.refunds;
    expect([...first.nodes, ...second.nodes]).toEqual(plain);
  });

  it("refuses an `after` that is not one of this payment's refunds", async () => {
    const res = await gql(server.baseUrl, acct.sk, PAGE, { id: paymentId, first: 2, after: 'rf_000000000000000000000000' });
    expect(res.body.errors?.[0]?.extensions?.code).toBe('invalid_request');
    expect(res.body.errors?.[0]?.message).toContain("'after'");
  });
});

describe('eventsConnection and webhookDeliveriesConnection', () => {
  it('page the same lists as events and webhookDeliveries, in the same order', async () => {
    const query = `query($id: ID!, $after: String) { paymentIntent(id: $id) {
      events { id } webhookDeliveries { id }
      eventsConnection(first: 2, after: $after) { nodes { id } pageInfo { hasNextPage endCursor } }
      webhookDeliveriesConnection(first: 100) { nodes { id endpointId } pageInfo { hasNextPage } }
    } }`;
    const page1 = (await gqlData(server.baseUrl, acct.sk, query, { id: paymentId })).paymentIntent;
    expect(page1.events.length).toBeGreaterThan(2);
    expect(page1.eventsConnection.nodes).toEqual(page1.events.slice(0, 2));
    expect(page1.eventsConnection.pageInfo.hasNextPage).toBe(true);
    const page2 = (await gqlData(server.baseUrl, acct.sk, query, { id: paymentId, after: page1.eventsConnection.pageInfo.endCursor })).paymentIntent;
    expect(page2.eventsConnection.nodes).toEqual(page1.events.slice(2, 4));
    expect(page1.webhookDeliveriesConnection.nodes.map((d: any) => d.id)).toEqual(page1.webhookDeliveries.map((d: any) => d.id));
    expect(page1.webhookDeliveriesConnection.pageInfo.hasNextPage).toBe(false);
  });

  it('need what the plain lists need: a key without refunds:read is refused refundsConnection', async () => {
    const restricted = (await acct.api.post('/api_keys', { name: 'intents only', permissions: ['payment_intents:read'] })).body.secret as string;
    const res = await gql(server.baseUrl, restricted, PAGE, { id: paymentId, first: 2 });
    expect(res.body.errors?.map((e) => e.extensions?.code)).toEqual(['permission_denied']);
  });
});

describe('the plain lists', () => {
  it('are deprecated, each naming its connection', async () => {
    const data = await gqlData(server.baseUrl, acct.sk, `{ __type(name: "PaymentIntent") { fields(includeDeprecated: true) { name isDeprecated deprecationReason } } }`);
    const fields = Object.fromEntries(data.__type.fields.map((f: any) => [f.name, f]));
    for (const name of ['refunds', 'events', 'webhookDeliveries']) {
      expect(fields[name], name).toMatchObject({ isDeprecated: true, deprecationReason: expect.stringContaining(`${name}Connection`) });
      expect(fields[`${name}Connection`], name).toMatchObject({ isDeprecated: false });
    }
  });
});
