import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_CAPS } from '../../src/domain/accountCaps';
import { keyRecord } from '../../src/domain/accounts/accountService';
import { ApiKeyModel } from '../../src/domain/accounts/apiKeyModel';
import { API_KEY_LIST_SIZE } from '../../src/domain/accounts/apiKeyService';
import { LINK_CODE_LENGTH } from '../../src/domain/links/paymentLinkService';
import { PaymentLinkModel, type PaymentLinkRecord } from '../../src/domain/links/paymentLinkModel';
import { newId, randomBase62 } from '../../src/ids';
import { createAccount, type TestAccount } from '../support/accounts';
import { type TestServer } from '../support/server';
import { errorCodes, gql, gqlData } from './support';
import { sharedGateway } from '../support/server';

/**
 * Issue 16: API keys and payment links per account are capped (ACCOUNT_CAPS), over REST and GraphQL,
 * so that every GraphQL list has a bound; the key list is cut to API_KEY_LIST_SIZE. Fixtures that would
 * take a thousand requests (links, revoked keys) are stored with the gateway's own models.
 */
let server: TestServer;
let baseUrl: string;

beforeAll(async () => {
  // Many key creations from one key: the rate limit is not what this file tests.
  server = await sharedGateway({ RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_PER_ACCOUNT_PER_MINUTE: '100000' });
  baseUrl = server.baseUrl;
});
afterAll(async () => {
  await server?.stop();
});

async function activeKeyCount(acct: TestAccount): Promise<number> {
  const list = await acct.api.get('/api_keys');
  return (list.body.data as Array<{ revoked_at: string | null }>).filter((k) => k.revoked_at === null).length;
}

describe('API keys', () => {
  it(`holds ${ACCOUNT_CAPS.activeApiKeys} active keys per account, under concurrent creates too; revoking frees a place`, async () => {
    const acct = await createAccount(baseUrl);
    const body = { name: 'worker', permissions: ['payment_intents:read'] };
    // The account's secret and publishable keys count: 18 restricted keys fit. 25 at once.
    const answers = await Promise.all(Array.from({ length: 25 }, () => acct.api.post('/api_keys', body)));
    const created = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status !== 201);
    expect(created.length).toBeLessThanOrEqual(ACCOUNT_CAPS.activeApiKeys - 2);
    for (const r of refused) {
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('invalid_request');
    }
    expect(await activeKeyCount(acct)).toBe(2 + created.length);
    // Racing creates may all be refused near the cap; one at a time, the account fills up exactly.
    while ((await activeKeyCount(acct)) < ACCOUNT_CAPS.activeApiKeys) {
      const one = await acct.api.post('/api_keys', body);
      expect(one.status).toBe(201);
      created.push(one);
    }

    const over = await acct.api.post('/api_keys', body);
    expect(over.status).toBe(400);
    expect(over.body.error.code).toBe('invalid_request');
    expect(over.body.error.message).toContain(`already has ${ACCOUNT_CAPS.activeApiKeys} active API keys`);
    const overGraphql = await gql(baseUrl, acct.sk, 'mutation { createApiKey(input: { name: "x", permissions: [EVENTS_READ] }) { id } }');
    expect(errorCodes(overGraphql)).toEqual(['invalid_request']);
    expect(await activeKeyCount(acct)).toBe(ACCOUNT_CAPS.activeApiKeys);

    // All 25 racing creates may have been refused: the victim may come from the one-at-a-time fill.
    const victim = created[0]!.body.id as string;
    expect((await acct.api.delete(`/api_keys/${victim}`)).status).toBe(200);
    expect((await acct.api.post('/api_keys', body)).status).toBe(201);
  });

  it(`lists every active key, newest first, then the most recently revoked: ${API_KEY_LIST_SIZE} in all, REST and GraphQL alike`, async () => {
    const acct = await createAccount(baseUrl);
    const start = Date.now();
    // 60 revoked keys, kept for ever; the later a key was revoked, the earlier it is listed.
    const revoked = Array.from({ length: 60 }, (_, i) => ({
      ...keyRecord(acct.id, 'restricted', `old ${i}`, ['events:read'], `sk_test_${randomBase62(32)}`, new Date(start - 100_000)),
      revoked_at: new Date(start - 60_000 + i * 1000),
    }));
    await ApiKeyModel.insertMany(revoked);
    const fresh = (await acct.api.post('/api_keys', { name: 'new', permissions: ['events:read'] })).body.id as string;

    const rest = (await acct.api.get('/api_keys')).body.data as Array<{ id: string; type: string; revoked_at: string | null }>;
    expect(rest).toHaveLength(API_KEY_LIST_SIZE);
    expect(rest.slice(0, 3).map((k) => k.revoked_at)).toEqual([null, null, null]);
    expect(rest[0]!.id).toBe(fresh);
    expect(rest.slice(3).map((k) => k.id)).toEqual(revoked.slice().reverse().slice(0, API_KEY_LIST_SIZE - 3).map((k) => k._id));
    const graphql = await gqlData(baseUrl, acct.sk, '{ apiKeys { id } }');
    expect(graphql.apiKeys.map((k: { id: string }) => k.id)).toEqual(rest.map((k) => k.id));
  });
});

describe('payment links', () => {
  it(`holds ${ACCOUNT_CAPS.activePaymentLinks} active links per account, POST /qr_codes and GraphQL included; deactivating frees a place`, async () => {
    const acct = await createAccount(baseUrl);
    const now = new Date();
    const existing: PaymentLinkRecord[] = Array.from({ length: ACCOUNT_CAPS.activePaymentLinks - 1 }, (_, i) => ({
      _id: newId('plink'),
      account_id: acct.id,
      seq: -1_000_000 - i,
      code: randomBase62(LINK_CODE_LENGTH),
      amount: 1000,
      currency: 'AOA',
      methods: ['multicaixa_express'],
      description: null,
      active: true,
      livemode: false,
      created_at: now,
      deactivated_at: null,
    }));
    // Deactivated links do not count.
    const deactivated = existing.slice(0, 5).map((l) => ({ ...l, _id: newId('plink'), code: randomBase62(LINK_CODE_LENGTH), active: false, deactivated_at: now }));
    await PaymentLinkModel.insertMany([...existing, ...deactivated]);
    const last = await acct.api.post('/payment_links', { amount: 2000 });
    expect(last.status).toBe(201);

    const over = await acct.api.post('/payment_links', { amount: 2000 });
    expect(over.status).toBe(400);
    expect(over.body.error.code).toBe('invalid_request');
    expect(over.body.error.message).toContain(`already has ${ACCOUNT_CAPS.activePaymentLinks} active payment links`);
    const qr = await acct.api.post('/qr_codes', { amount: 2000 });
    expect(qr.status).toBe(400);
    expect(qr.body.error.code).toBe('invalid_request');
    expect(errorCodes(await gql(baseUrl, acct.sk, 'mutation { createPaymentLink(input: { amount: 2000 }) { id } }'))).toEqual(['invalid_request']);
    expect(errorCodes(await gql(baseUrl, acct.sk, 'mutation { createQrCode(input: { amount: 2000 }) { id } }'))).toEqual(['invalid_request']);
    // A QR code of an existing link creates nothing: still allowed.
    expect((await acct.api.post('/qr_codes', { payment_link: last.body.code })).status).toBe(201);
    expect(await PaymentLinkModel.countDocuments({ account_id: acct.id, active: true })).toBe(ACCOUNT_CAPS.activePaymentLinks);

    expect((await acct.api.delete(`/payment_links/${last.body.id}`)).status).toBe(200);
    expect((await acct.api.post('/qr_codes', { amount: 2000 })).status).toBe(201);
  });
});
