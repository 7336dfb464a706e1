import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, idempotencyKey } from '../support/accounts';
import { type TestServer } from '../support/server';
import { errorCodes, gql, gqlData, INTENT_FIELDS } from './support';
import { sharedGateway } from '../support/server';

/** The GraphQL endpoint over HTTP: authentication, permissions, rate limit, errors, limits. */
let server: TestServer;
let baseUrl: string;

beforeAll(async () => {
  server = await sharedGateway();
  baseUrl = server.baseUrl;
});
afterAll(async () => {
  await server?.stop();
});

const CREATE_INTENT = `mutation($input: CreatePaymentIntentInput!, $key: String!) {
  createPaymentIntent(input: $input, idempotencyKey: $key) { ${INTENT_FIELDS} }
}`;

describe('authentication and rate limit', () => {
  it('refuses a missing or invalid key with authentication_failed (401), like REST', async () => {
    for (const key of [null, 'sk_test_notARealKey', 'sk_live_0123456789abcdefghijklmnopqrstuv']) {
      const res = await gql(baseUrl, key, '{ account { id } }');
      expect(res.status).toBe(401);
      expect(errorCodes(res)).toEqual(['authentication_failed']);
      expect(res.body.errors?.[0]?.extensions?.request_id).toMatch(/^req_/);
      expect(res.headers.get('request-id')).toBe(res.body.errors?.[0]?.extensions?.request_id);
    }
  });

  it('answers with the account of the key and sets the X-RateLimit headers; each request counts once', async () => {
    const acct = await createAccount(baseUrl);
    const first = await gql(baseUrl, acct.sk, '{ account { id name livemode referenceEntity } a2: account { id } }');
    expect(first.status).toBe(200);
    expect(first.body.data.account).toMatchObject({ id: acct.id, livemode: false });
    expect(first.body.data.account.referenceEntity).toMatch(/^\d{5}$/);
    expect(first.headers.get('x-ratelimit-limit')).toBe('120');
    expect(first.headers.get('cache-control')).toBe('no-store');
    const remaining1 = Number(first.headers.get('x-ratelimit-remaining'));
    const second = await gql(baseUrl, acct.sk, '{ account { id } paymentMethods { code } }');
    // Two root fields, still one request.
    expect(Number(second.headers.get('x-ratelimit-remaining'))).toBe(remaining1 - 1);
    expect(Number(second.headers.get('x-ratelimit-reset'))).toBeGreaterThanOrEqual(0);
    // REST and GraphQL share the key's bucket.
    const rest = await acct.api.get('/account');
    expect(Number(rest.headers.get('x-ratelimit-remaining'))).toBe(remaining1 - 2);
  });

  it('refuses a publishable key everything but paymentMethods (permission_denied)', async () => {
    const acct = await createAccount(baseUrl);
    const methods = await gqlData(baseUrl, acct.pk, '{ paymentMethods { code status minAmount maxAmount channels { api } } }');
    expect(methods.paymentMethods.map((m: { code: string }) => m.code)).toContain('MULTICAIXA_EXPRESS');
    const res = await gql(baseUrl, acct.pk, '{ account { id } }');
    expect(res.status).toBe(200);
    expect(errorCodes(res)).toEqual(['permission_denied']);
  });
});

describe('restricted keys', () => {
  it('grants what the key holds and refuses the rest with permission_denied, per field', async () => {
    const acct = await createAccount(baseUrl);
    const key = await gqlData(baseUrl, acct.sk, `mutation { createApiKey(input: { name: "reader", permissions: [PAYMENT_INTENTS_READ] }) { id type permissions secret last4 } }`);
    expect(key.createApiKey).toMatchObject({ type: 'RESTRICTED', permissions: ['PAYMENT_INTENTS_READ'] });
    const secret = key.createApiKey.secret as string;
    expect(secret).toMatch(/^sk_test_/);

    const list = await gql(baseUrl, secret, '{ paymentIntents(first: 5) { nodes { id } } }');
    expect(list.body.errors).toBeUndefined();

    const write = await gql(baseUrl, secret, CREATE_INTENT, {
      input: { amount: 1000, currency: 'AOA', paymentMethod: 'MULTICAIXA_REFERENCE' },
      key: idempotencyKey(),
    });
    expect(errorCodes(write)).toEqual(['permission_denied']);
    // A nested field that reads another resource needs that resource's permission too.
    const created = await acct.api.post('/payment_intents', { amount: 1000, currency: 'AOA', payment_method: 'multicaixa_reference' }, { idempotencyKey: idempotencyKey() });
    const nested = await gql(baseUrl, secret, `query($id: ID!) { paymentIntent(id: $id) { id events { id } } }`, { id: created.body.id });
    expect(nested.body.data.paymentIntent).toBeNull();
    expect(errorCodes(nested)).toEqual(['permission_denied']);
    // Only the full secret key manages keys.
    expect(errorCodes(await gql(baseUrl, secret, '{ apiKeys { id } }'))).toEqual(['permission_denied']);

    const revoked = await gqlData(baseUrl, acct.sk, `mutation($id: ID!) { revokeApiKey(id: $id) { id revokedAt } }`, { id: key.createApiKey.id });
    expect(revoked.revokeApiKey.revokedAt).toMatch(/Z$/);
    expect((await gql(baseUrl, secret, '{ account { id } }')).status).toBe(401);
  });
});

describe('errors', () => {
  it('gives the REST codes for invalid inputs, from the same validators', async () => {
    const acct = await createAccount(baseUrl);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ amount: 50, currency: 'AOA', paymentMethod: 'MULTICAIXA_REFERENCE' }, 'amount_out_of_range'],
      [{ amount: 6_000_000, currency: 'AOA', paymentMethod: 'MULTICAIXA_EXPRESS', customer: { mobile: '923000000' } }, 'amount_out_of_range'],
      [{ amount: 1000, currency: 'AOA', paymentMethod: 'MULTICAIXA_EXPRESS', customer: { mobile: '12345' } }, 'invalid_phone_number'],
      [{ amount: 1000, currency: 'AOA', paymentMethod: 'MULTICAIXA_EXPRESS' }, 'invalid_phone_number'],
      [{ amount: 1000, currency: 'AOA', paymentMethod: 'CARD' }, 'method_disabled'],
      [{ amount: 1000, currency: 'USD', paymentMethod: 'MULTICAIXA_REFERENCE' }, 'invalid_request'],
      [{ amount: 1000, currency: 'AOA', paymentMethod: 'MULTICAIXA_REFERENCE', merchantReference: 'x'.repeat(65) }, 'invalid_request'],
      [{ amount: 1000, currency: 'AOA', paymentMethod: 'MULTICAIXA_REFERENCE', metadata: { n: 1 } }, 'invalid_request'],
      [{ amount: 1000, currency: 'AOA', paymentMethod: 'MULTICAIXA_REFERENCE', metadata: { payment_link: 'plink_x' } }, 'invalid_request'],
      [{ amount: 1000, currency: 'AOA', paymentMethod: 'MULTICAIXA_REFERENCE', metadata: { checkout_session: 'cs_x' } }, 'invalid_request'],
      [{ amount: 1000, currency: 'AOA', paymentMethod: 'MULTICAIXA_REFERENCE', metadata: { $where: '1' } }, 'invalid_request'],
      [{ amount: 1000, currency: 'AOA', paymentMethod: 'MULTICAIXA_REFERENCE', metadata: { 'a.b': '1' } }, 'invalid_request'],
    ];
    for (const [input, code] of cases) {
      const res = await gql(baseUrl, acct.sk, CREATE_INTENT, { input, key: idempotencyKey() });
      expect(errorCodes(res), JSON.stringify(input)).toEqual([code]);
      // The same body over REST gives the same code.
      const rest = await acct.api.post('/payment_intents', restBodyOf(input), { idempotencyKey: idempotencyKey() });
      expect(rest.body.error.code, JSON.stringify(input)).toBe(code);
    }
    // The message names the key, as over REST.
    const reserved = await gql(baseUrl, acct.sk, CREATE_INTENT, {
      input: { amount: 1000, currency: 'AOA', paymentMethod: 'MULTICAIXA_REFERENCE', metadata: { payment_link: 'plink_x' } },
      key: idempotencyKey(),
    });
    expect(reserved.body.errors?.[0]?.message).toContain("key 'payment_link' is reserved");
    // GraphQL's own refusals (unknown enum value, missing argument) are invalid_request too.
    const badEnum = await gql(baseUrl, acct.sk, CREATE_INTENT, { input: { amount: 1000, currency: 'AOA', paymentMethod: 'BITCOIN' }, key: idempotencyKey() });
    expect(badEnum.status).toBe(400);
    expect(errorCodes(badEnum)).toEqual(['invalid_request']);
    const syntax = await gql(baseUrl, acct.sk, '{ account { id ');
    expect(errorCodes(syntax)).toEqual(['invalid_request']);
    const unknownField = await gql(baseUrl, acct.sk, '{ account { secretSauce } }');
    expect(errorCodes(unknownField)).toEqual(['invalid_request']);
    const shortKey = await gql(baseUrl, acct.sk, CREATE_INTENT, { input: { amount: 1000, currency: 'AOA', paymentMethod: 'MULTICAIXA_REFERENCE' }, key: 'short' });
    expect(errorCodes(shortKey)).toEqual(['invalid_request']);
    expect(shortKey.body.errors?.[0]?.message).toContain('idempotencyKey');
  });

  it('answers resource_not_found for unknown ids and for another account\'s ids', async () => {
    const a = await createAccount(baseUrl);
    const b = await createAccount(baseUrl);
    const intent = await a.api.post('/payment_intents', { amount: 1000, currency: 'AOA', payment_method: 'multicaixa_reference' }, { idempotencyKey: idempotencyKey() });
    const link = await a.api.post('/payment_links', { amount: 1000 });
    for (const [query, vars] of [
      ['query($id: ID!) { paymentIntent(id: $id) { id } }', { id: intent.body.id }],
      ['query($id: ID!) { paymentIntent(id: $id) { id } }', { id: 'pay_doesnotexist' }],
      ['query($id: ID!) { paymentLink(id: $id) { id } }', { id: link.body.id }],
      ['mutation($id: ID!) { cancelPaymentIntent(id: $id) { id } }', { id: intent.body.id }],
      ['mutation($id: ID!) { deactivatePaymentLink(id: $id) { id } }', { id: link.body.id }],
    ] as const) {
      const res = await gql(baseUrl, b.sk, query, vars);
      expect(errorCodes(res), query).toEqual(['resource_not_found']);
    }
    // Still there for its owner.
    expect((await gqlData(baseUrl, a.sk, 'query($id: ID!) { paymentIntent(id: $id) { status } }', { id: intent.body.id })).paymentIntent.status).toBe('PENDING');
  });

  it('answers payment_already_processed for a transition the state table refuses', async () => {
    const acct = await createAccount(baseUrl);
    const intent = await acct.api.post('/payment_intents', { amount: 1000, currency: 'AOA', payment_method: 'multicaixa_reference' }, { idempotencyKey: idempotencyKey() });
    const cancel = 'mutation($id: ID!) { cancelPaymentIntent(id: $id) { status } }';
    expect((await gqlData(baseUrl, acct.sk, cancel, { id: intent.body.id })).cancelPaymentIntent.status).toBe('CANCELLED');
    expect(errorCodes(await gql(baseUrl, acct.sk, cancel, { id: intent.body.id }))).toEqual(['payment_already_processed']);
  });
});

describe('limits', () => {
  it('rejects an over-deep query with invalid_request (400) before running it', async () => {
    const acct = await createAccount(baseUrl);
    const deep = `{ paymentIntents(first: 1) { edges { node { refunds { paymentIntent { refunds { paymentIntent { refunds { paymentIntent { id } } } } } } } } } }`;
    const res = await gql(baseUrl, acct.sk, deep);
    expect(res.status).toBe(400);
    expect(errorCodes(res)).toEqual(['invalid_request']);
    expect(res.body.errors?.[0]?.message).toMatch(/too deep/i);
    expect(res.body.data).toBeUndefined();
  });

  it('rejects first above the REST limit of the list (500 intents, 100 events) and over-expensive queries with invalid_request', async () => {
    const acct = await createAccount(baseUrl);
    const tooMany = await gql(baseUrl, acct.sk, '{ paymentIntents(first: 501) { nodes { id } } }');
    expect(tooMany.status).toBe(400);
    expect(errorCodes(tooMany)).toEqual(['invalid_request']);
    expect(tooMany.body.errors?.[0]?.message).toContain("'first'");
    const viaVariable = await gql(baseUrl, acct.sk, 'query($n: Int) { events(first: $n) { nodes { id } } }', { n: 500 });
    expect(errorCodes(viaVariable)).toEqual(['invalid_request']);
    const zero = await gql(baseUrl, acct.sk, '{ logs(first: 0) { requestId } }');
    expect(errorCodes(zero)).toEqual(['invalid_request']);

    const aliases = Array.from({ length: 30 }, (_, i) => `a${i}: paymentIntents(first: 100) { nodes { ${INTENT_FIELDS} } }`).join('\n');
    const wide = await gql(baseUrl, acct.sk, `{ ${aliases} }`);
    expect(wide.status).toBe(400);
    expect(errorCodes(wide)).toEqual(['invalid_request']);
    expect(wide.body.errors?.[0]?.message).toMatch(/too expensive/i);
  });

  it('lets GraphiQL introspect the schema (introspection is not held to the depth limit)', async () => {
    const acct = await createAccount(baseUrl);
    const res = await gql(baseUrl, acct.sk, `{ __schema { types { name fields { name type { name ofType { name ofType { name ofType { name ofType { name } } } } } } } } }`);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.__schema.types.map((t: { name: string }) => t.name)).toContain('PaymentIntent');
  });

  it('refuses a body above MAX_BODY_BYTES with payload_too_large (413) and broken JSON with invalid_json', async () => {
    const acct = await createAccount(baseUrl);
    const big = await fetch(`${baseUrl}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acct.sk}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ account { id } } # ${'x'.repeat(70_000)}` }),
    });
    expect(big.status).toBe(413);
    expect((await big.json()).errors[0].extensions.code).toBe('payload_too_large');
    const broken = await fetch(`${baseUrl}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acct.sk}`, 'content-type': 'application/json' },
      body: '{"query": ',
    });
    expect(broken.status).toBe(400);
    expect((await broken.json()).errors[0].extensions.code).toBe('invalid_json');
  });
});

describe('GraphiQL', () => {
  it('serves the GraphiQL page and its bundles from the gateway itself, no CDN', async () => {
    const page = await fetch(`${baseUrl}/graphql`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    const scripts = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThanOrEqual(4);
    for (const src of scripts) {
      expect(src.startsWith('/graphql/assets/'), src).toBe(true);
      const asset = await fetch(`${baseUrl}${src}`);
      expect(asset.status, src).toBe(200);
      expect((await asset.text()).length, src).toBeGreaterThan(20);
    }
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<script>|<style>/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    // Not a browser: GET runs a query, so one without a query is the request's error (a key's 400; 401 without one).
    const { sk } = await createAccount(baseUrl);
    const api = await fetch(`${baseUrl}/graphql`, { headers: { accept: 'application/json', authorization: `Bearer ${sk}` } });
    expect(api.status).toBe(400);
    expect((await api.json()).errors[0].extensions.code).toBe('invalid_request');
    expect((await fetch(`${baseUrl}/graphql`, { headers: { accept: 'application/json' } })).status).toBe(401);
    // Matched as Express matched it: any case, one trailing slash.
    const other = await fetch(`${baseUrl}/GraphQL/`, { method: 'POST', headers: { authorization: `Bearer ${sk}`, 'content-type': 'application/json' }, body: '{"query":"{ account { id } }"}' });
    expect(other.status).toBe(200);
    expect((await other.json()).data.account.id).toMatch(/^acct_/);
  });
});

function restBodyOf(input: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { currency: 'AOA' };
  for (const [k, v] of Object.entries(input)) {
    const snake = k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    out[snake] = k === 'paymentMethod' ? String(v).toLowerCase() : v;
  }
  return out;
}
