import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, idempotencyKey } from '../support/accounts';
import { ApiClient } from '../support/client';
import { type TestServer } from '../support/server';
import { errorCodes, gql, gqlData, INTENT_FIELDS } from './support';
import { sharedGateway } from '../support/server';

/**
 * Issue 15, item 11: what REST offers and GraphQL lacked or bounded differently. Each case runs the
 * real gateway over HTTP and holds GraphQL to what REST answers for the same thing.
 */
let server: TestServer;
let baseUrl: string;

beforeAll(async () => {
  server = await sharedGateway();
  baseUrl = server.baseUrl;
});
afterAll(async () => {
  await server?.stop();
});

const CREATE_ACCOUNT = `mutation($input: CreateSandboxAccountInput) {
  createSandboxAccount(input: $input) { __typename id name email pk sk livemode createdAt }
}`;

describe('createSandboxAccount', () => {
  it('needs no key, creates the account with POST /sandbox/accounts\'s service and shows its keys once', async () => {
    const res = await gql(baseUrl, null, CREATE_ACCOUNT, { input: { name: 'Loja GraphQL', email: 'dev@loja.example' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.errors).toBeUndefined();
    const acct = res.body.data.createSandboxAccount;
    expect(acct).toMatchObject({ __typename: 'SandboxAccount', name: 'Loja GraphQL', email: 'dev@loja.example', livemode: false });
    expect(acct.id).toMatch(/^acct_[0-9A-Za-z]{24}$/);
    expect(acct.sk).toMatch(/^sk_test_[0-9A-Za-z]{32}$/);
    expect(acct.pk).toMatch(/^pk_test_[0-9A-Za-z]{32}$/);
    expect(acct.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // The keys work over both APIs, with the permissions REST gives them.
    expect((await new ApiClient(baseUrl, acct.sk).get('/account')).body.id).toBe(acct.id);
    expect((await gqlData(baseUrl, acct.sk, '{ account { id name } }')).account).toEqual({ id: acct.id, name: 'Loja GraphQL' });
    expect(errorCodes(await gql(baseUrl, acct.pk, '{ account { id } }'))).toEqual(['permission_denied']);
    // Shown once: afterwards the keys are listed by their last 4 characters only.
    const keys = (await gqlData(baseUrl, acct.sk, '{ apiKeys { type last4 secret } }')).apiKeys as Array<{ type: string; last4: string; secret: null }>;
    expect(keys.map((k) => [k.type, k.last4, k.secret]).sort()).toEqual(
      [
        ['PUBLISHABLE', acct.pk.slice(-4), null],
        ['SECRET', acct.sk.slice(-4), null],
      ].sort(),
    );
    // No input: the defaults of an empty REST body.
    const bare = await gql(baseUrl, null, 'mutation { createSandboxAccount { name email } }');
    const restBare = await new ApiClient(baseUrl).post('/sandbox/accounts', {});
    expect(bare.body.data.createSandboxAccount).toEqual({ name: restBare.body.name, email: null });
  });

  it('validates its input with the REST body validator, and runs nothing else without a key', async () => {
    for (const input of [{ email: 'not-an-email' }, { name: '' }, { name: 'x'.repeat(81) }]) {
      const res = await gql(baseUrl, null, CREATE_ACCOUNT, { input });
      const rest = await new ApiClient(baseUrl).post('/sandbox/accounts', input);
      expect(rest.status).toBe(400);
      expect(errorCodes(res), JSON.stringify(input)).toEqual([rest.body.error.code]);
      expect(res.body.data?.createSandboxAccount ?? null).toBeNull();
    }
    // Without a key only an operation made of public fields runs; anything else is 401, as before.
    const mixed = await gql(baseUrl, null, 'mutation { createSandboxAccount { id } createPaymentLink(input: { amount: 500 }) { id } }');
    expect(mixed.status).toBe(401);
    expect(errorCodes(mixed)).toEqual(['authentication_failed']);
    const viaFragment = await gql(baseUrl, null, 'mutation { ...M } fragment M on Mutation { createSandboxAccount { id } revokeApiKey(id: "key_x") { id } }');
    expect(viaFragment.status).toBe(401);
    const query = await gql(baseUrl, null, '{ account { id } }');
    expect(query.status).toBe(401);
  });
});

describe('PaymentLink.qrSvg', () => {
  it('is the SVG of GET /payment_links/{id}/qr, with its permission', async () => {
    const acct = await createAccount(baseUrl);
    const link = await acct.api.post('/payment_links', { amount: 7_500, description: 'Camisola' });
    const restSvg = await acct.api.get(`/payment_links/${link.body.id}/qr`);
    expect(restSvg.status).toBe(200);
    expect(restSvg.text).toMatch(/^<svg /);

    const read = await gqlData(baseUrl, acct.sk, 'query($id: ID!) { paymentLink(id: $id) { qrSvg } paymentLinks { id qrSvg } }', { id: link.body.id });
    expect(read.paymentLink.qrSvg).toBe(restSvg.text);
    expect(read.paymentLinks).toEqual([{ id: link.body.id, qrSvg: restSvg.text }]);
    const created = await gqlData(baseUrl, acct.sk, 'mutation { createPaymentLink(input: { amount: 900 }) { id qrSvg } }');
    expect(created.createPaymentLink.qrSvg).toBe((await acct.api.get(`/payment_links/${created.createPaymentLink.id}/qr`)).text);

    // A restricted key: the QR needs payment_links:read, over both APIs.
    const reader = await acct.api.post('/api_keys', { name: 'links', permissions: ['payment_links:read'] });
    expect((await gqlData(baseUrl, reader.body.secret, 'query($id: ID!) { paymentLink(id: $id) { qrSvg } }', { id: link.body.id })).paymentLink.qrSvg).toBe(restSvg.text);
  });
});

describe('webhookEndpoint(id)', () => {
  it('reads one endpoint as GET /webhook_endpoints lists it, with webhook_endpoints:read, never another account\'s', async () => {
    const acct = await createAccount(baseUrl);
    const created = await acct.api.post('/webhook_endpoints', { url: 'http://127.0.0.1:9/hook', events: ['payment.succeeded'], name: 'shop', description: 'orders' });
    expect(created.status).toBe(201);
    const query = 'query($id: ID!) { webhookEndpoint(id: $id) { id url events name description createdAt secret deliveries { id } } }';
    const one = await gqlData(baseUrl, acct.sk, query, { id: created.body.id });
    const listed = ((await acct.api.get('/webhook_endpoints')).body.data as Array<Record<string, unknown>>).find((e) => e.id === created.body.id)!;
    expect(one.webhookEndpoint).toEqual({
      id: listed.id,
      url: listed.url,
      events: listed.events,
      name: listed.name,
      description: listed.description,
      createdAt: listed.created_at,
      secret: null,
      deliveries: [],
    });

    const other = await createAccount(baseUrl);
    const foreign = await gql(baseUrl, other.sk, query, { id: created.body.id });
    expect(errorCodes(foreign)).toEqual(['resource_not_found']);
    expect(foreign.body.data?.webhookEndpoint ?? null).toBeNull();

    const reader = await acct.api.post('/api_keys', { name: 'hooks', permissions: ['webhook_endpoints:read'] });
    expect((await gqlData(baseUrl, reader.body.secret, query, { id: created.body.id })).webhookEndpoint.id).toBe(created.body.id);
    const stranger = await acct.api.post('/api_keys', { name: 'payments', permissions: ['payment_intents:read'] });
    expect((await acct.api.get('/webhook_endpoints', { key: stranger.body.secret })).status).toBe(403);
    expect(errorCodes(await gql(baseUrl, stranger.body.secret, query, { id: created.body.id }))).toEqual(['permission_denied']);
  });
});

describe('paymentIntents(first:)', () => {
  it('takes first up to the maximum of REST\'s limit (500, read from the contract), and refuses above it as REST does', async () => {
    const acct = await createAccount(baseUrl);
    const contract = (await acct.api.get('/openapi.json', { root: true })).body;
    const maximum = contract.components.parameters.PaymentIntentLimit.schema.maximum as number;
    expect(maximum).toBe(500);
    for (let i = 0; i < 2; i++) {
      await acct.api.post('/payment_intents', { amount: 1_000 + i, currency: 'AOA', payment_method: 'multicaixa_reference' }, { idempotencyKey: idempotencyKey() });
    }
    expect((await acct.api.get(`/payment_intents?limit=${maximum}`)).status).toBe(200);
    // A whole REST page, every field REST returns, fits the cost limit.
    const page = await gql(baseUrl, acct.sk, 'query($n: Int) { paymentIntents(first: $n) { edges { cursor node { ' + INTENT_FIELDS + ' } } } }', { n: maximum });
    expect(page.body.errors).toBeUndefined();
    expect(page.body.data.paymentIntents.edges).toHaveLength(2);

    expect((await acct.api.get(`/payment_intents?limit=${maximum + 1}`)).status).toBe(400);
    const over = await gql(baseUrl, acct.sk, `{ paymentIntents(first: ${maximum + 1}) { nodes { id } } }`);
    expect(over.status).toBe(400);
    expect(errorCodes(over)).toEqual(['invalid_request']);
    expect(over.body.errors?.[0]?.message).toContain(`from 1 to ${maximum}`);
  });
});

describe('createPaymentIntent currency', () => {
  it('is required, as in POST /payment_intents (no default)', async () => {
    const acct = await createAccount(baseUrl);
    const mutation = 'mutation($input: CreatePaymentIntentInput!, $key: String!) { createPaymentIntent(input: $input, idempotencyKey: $key) { id currency } }';
    const missing = await gql(baseUrl, acct.sk, mutation, { input: { amount: 1_000, paymentMethod: 'MULTICAIXA_REFERENCE' }, key: idempotencyKey() });
    expect(missing.status).toBe(400);
    expect(errorCodes(missing)).toEqual(['invalid_request']);
    expect(missing.body.errors?.[0]?.message).toContain('currency');
    const rest = await acct.api.post('/payment_intents', { amount: 1_000, payment_method: 'multicaixa_reference' }, { idempotencyKey: idempotencyKey() });
    expect(rest.status).toBe(400);
    expect(rest.body.error.code).toBe('invalid_request');
    // Given, it goes through the REST validator: only AOA.
    const ok = await gqlData(baseUrl, acct.sk, mutation, { input: { amount: 1_000, currency: 'AOA', paymentMethod: 'MULTICAIXA_REFERENCE' }, key: idempotencyKey() });
    expect(ok.createPaymentIntent.currency).toBe('AOA');
    const usd = await gql(baseUrl, acct.sk, mutation, { input: { amount: 1_000, currency: 'USD', paymentMethod: 'MULTICAIXA_REFERENCE' }, key: idempotencyKey() });
    expect(errorCodes(usd)).toEqual(['invalid_request']);
    // The schema says so.
    const intro = await gqlData(baseUrl, acct.sk, '{ __type(name: "CreatePaymentIntentInput") { inputFields { name defaultValue type { kind ofType { name } } } } }');
    const currency = intro.__type.inputFields.find((f: { name: string }) => f.name === 'currency');
    expect(currency).toEqual({ name: 'currency', defaultValue: null, type: { kind: 'NON_NULL', ofType: { name: 'String' } } });
  });
});

describe('SandboxClock.offsetSeconds', () => {
  it('reads what REST reads past 2^31 - 1 s (69 years of advances): a JSON integer, not a 32-bit Int', async () => {
    const acct = await createAccount(baseUrl);
    const YEAR = 31_536_000;
    const INT_MAX = 2_147_483_647;
    let offset = 0;
    for (let year = 0; year < 69; year++) {
      const res = await acct.api.post('/sandbox/clock/advance', { seconds: YEAR });
      expect(res.status).toBe(200);
      offset = res.body.offset_seconds;
    }
    expect(offset).toBe(69 * YEAR);
    expect(offset).toBeGreaterThan(INT_MAX);

    const read = await gql(baseUrl, acct.sk, '{ sandboxClock { now offsetSeconds } }');
    expect(read.body.errors, JSON.stringify(read.body.errors)).toBeUndefined();
    const rest = await acct.api.get('/sandbox/clock');
    expect(read.body.data.sandboxClock.offsetSeconds).toBe(rest.body.offset_seconds);
    expect(typeof read.body.data.sandboxClock.offsetSeconds).toBe('number');
    expect(Date.parse(read.body.data.sandboxClock.now) - Date.now()).toBeGreaterThan(69 * YEAR * 1000 - 60_000);

    const advanced = await gql(baseUrl, acct.sk, 'mutation { advanceSandboxClock(input: { seconds: 60 }) { offsetSeconds } }');
    expect(advanced.body.errors, JSON.stringify(advanced.body.errors)).toBeUndefined();
    expect(advanced.body.data.advanceSandboxClock.offsetSeconds).toBe(offset + 60);
    expect((await acct.api.get('/sandbox/clock')).body.offset_seconds).toBe(offset + 60);

    // The schema says which scalar: SafeInt, up to 2^53 - 1.
    const intro = await gqlData(baseUrl, acct.sk, '{ __type(name: "SandboxClock") { fields { name type { kind ofType { name } } } } }');
    const field = intro.__type.fields.find((f: { name: string }) => f.name === 'offsetSeconds');
    expect(field.type).toEqual({ kind: 'NON_NULL', ofType: { name: 'SafeInt' } });
  });
});
