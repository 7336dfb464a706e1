import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, idempotencyKey, type TestAccount } from '../support/accounts';
import { type TestServer } from '../support/server';
import { errorCodes, gql, gqlData, INTENT_FIELDS } from './support';
import { sharedGateway } from '../support/server';

/**
 * Issue 16: GraphQL cost from real bounds, over HTTP against the real gateway. Each refusal comes
 * before execution: HTTP 400 (403 for a publishable key) and no `data` at all.
 */
let server: TestServer;
let baseUrl: string;
let acct: TestAccount;
let paidId: string;

/** A paid reference payment with `count` refunds of 100 AOA. */
async function paymentWithRefunds(account: TestAccount, count: number): Promise<string> {
  const created = await account.api.post('/payment_intents', { amount: 100_000, currency: 'AOA', payment_method: 'multicaixa_reference' }, { idempotencyKey: idempotencyKey() });
  await account.api.post('/sandbox/simulate/reference_paid', { reference: created.body.reference.number });
  for (let i = 0; i < count; i++) {
    const refund = await account.api.post('/refunds', { payment_intent: created.body.id, amount: 100 }, { idempotencyKey: idempotencyKey() });
    expect(refund.status).toBe(201);
  }
  return created.body.id as string;
}

beforeAll(async () => {
  server = await sharedGateway();
  baseUrl = server.baseUrl;
  acct = await createAccount(baseUrl);
  paidId = await paymentWithRefunds(acct, 15);
});
afterAll(async () => {
  await server?.stop();
});

function expectRefusedBeforeExecution(res: Awaited<ReturnType<typeof gql>>, code = 'invalid_request', status = 400): void {
  expect(res.status).toBe(status);
  expect(errorCodes(res)).toEqual([code]);
  expect(res.body.data).toBeUndefined();
}

describe('lists of one payment are paginated', () => {
  it('returns at most `first` refunds and events (default 20, at most 100)', async () => {
    const all = await gqlData(baseUrl, acct.sk, 'query($id: ID!) { paymentIntent(id: $id) { refunds { id } events { type } } }', { id: paidId });
    expect(all.paymentIntent.refunds).toHaveLength(15);
    const five = await gqlData(baseUrl, acct.sk, 'query($id: ID!) { paymentIntent(id: $id) { refunds(first: 5) { id } events(first: 2) { type } } }', { id: paidId });
    expect(five.paymentIntent.refunds.map((r: { id: string }) => r.id)).toEqual(all.paymentIntent.refunds.slice(0, 5).map((r: { id: string }) => r.id));
    expect(five.paymentIntent.events).toEqual(all.paymentIntent.events.slice(0, 2));
    const over = await gql(baseUrl, acct.sk, 'query($id: ID!) { paymentIntent(id: $id) { refunds(first: 101) { id } } }', { id: paidId });
    expectRefusedBeforeExecution(over);
    expect(over.body.errors?.[0]?.message).toContain('from 1 to 100');
  });
});

describe('cost from real bounds', () => {
  it('refuses, before execution, the nested refunds query that built 3,375 objects at a cost of 187', async () => {
    const res = await gql(baseUrl, acct.sk, 'query($id: ID!) { paymentIntent(id: $id) { refunds { paymentIntent { refunds { paymentIntent { refunds { id } } } } } } }', { id: paidId });
    expectRefusedBeforeExecution(res);
    expect(res.body.errors?.[0]?.message).toMatch(/too expensive/);
  });

  it('refuses 106 aliases of a payment with its refunds and their payment', async () => {
    const one = 'paymentIntent(id: $id) { refunds { id paymentIntent { id } } }';
    // One copy is fine (and answers the 15 refunds); 106 are not.
    const single = await gqlData(baseUrl, acct.sk, `query($id: ID!) { ${one} }`, { id: paidId });
    expect(single.paymentIntent.refunds).toHaveLength(15);
    const aliases = Array.from({ length: 106 }, (_, i) => `a${i}: ${one}`).join(' ');
    const res = await gql(baseUrl, acct.sk, `query($id: ID!) { ${aliases} }`, { id: paidId });
    expectRefusedBeforeExecution(res);
    expect(res.body.errors?.[0]?.message).toMatch(/too expensive/);
  });

  it("reads `first` from a variable's default, not only from its value", async () => {
    const query = `query($n: Int = 500) { paymentIntents(first: $n) { nodes { ${INTENT_FIELDS} events { id type } } } }`;
    const res = await gql(baseUrl, acct.sk, query);
    expectRefusedBeforeExecution(res);
    expect(res.body.errors?.[0]?.message).toMatch(/too expensive/);
    // The same operation with a small value runs.
    expect((await gql(baseUrl, acct.sk, query, { n: 5 })).status).toBe(200);
    // A default beyond the bounds is refused like a literal.
    const beyond = await gql(baseUrl, acct.sk, 'query($n: Int = 1000) { paymentIntents(first: $n) { nodes { id } } }');
    expectRefusedBeforeExecution(beyond);
    expect(beyond.body.errors?.[0]?.message).toContain('from 1 to 500');
  });
});

describe('introspection', () => {
  it('is refused to a publishable key (permission_denied), which may still read payment methods', async () => {
    for (const query of ['{ __schema { types { name } } }', '{ __type(name: "PaymentIntent") { fields { name } } }', getIntrospectionQuery()]) {
      expectRefusedBeforeExecution(await gql(baseUrl, acct.pk, query), 'permission_denied', 403);
    }
    expect((await gqlData(baseUrl, acct.pk, '{ paymentMethods { code } __typename }')).paymentMethods.length).toBeGreaterThan(0);
  });

  it("accepts GraphiQL's full introspection query for a secret key, and refuses aliased copies of it", async () => {
    const full = getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true });
    const data = await gqlData(baseUrl, acct.sk, full);
    expect(data.__schema.types.map((t: { name: string }) => t.name)).toContain('PaymentIntent');
    const aliased = Array.from({ length: 40 }, (_, i) => `s${i}: __schema { types { name fields { name description } } }`).join(' ');
    const res = await gql(baseUrl, acct.sk, `{ ${aliased} }`);
    expectRefusedBeforeExecution(res);
    expect(res.body.errors?.[0]?.message).toMatch(/40 __schema fields, at most 1/);
  });

  it('costs introspection by what it returns: many copies of every field of every type are refused', async () => {
    const everyField = 'types { name description fields { name description args { name description } type { name } } }';
    const once = await gql(baseUrl, acct.sk, `{ __schema { ${everyField} } }`);
    expect(once.status).toBe(200);
    const copies = Array.from({ length: 30 }, (_, i) => `t${i}: ${everyField}`).join(' ');
    const res = await gql(baseUrl, acct.sk, `{ __schema { ${copies} } }`);
    expectRefusedBeforeExecution(res);
    expect(res.body.errors?.[0]?.message).toMatch(/too expensive/);
  });
});
