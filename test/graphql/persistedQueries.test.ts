import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { persistedQueryStats } from '../../src/graphql/persistedQueries';
import { createExpressPayment, mintToken } from '../clientTokens/support';
import { createAccount } from '../support/accounts';
import { type TestServer } from '../support/server';
import { startGraphqlTestServer } from './support';

/**
 * Automatic persisted queries are kept per account and credential kind (src/graphql/persistedQueries.ts):
 * a client token's apart from its account's keys, keyless callers store none and evict none, and one
 * account registering past its own bound evicts only its own.
 */
let server: TestServer;
let baseUrl: string;

beforeAll(async () => {
  server = await startGraphqlTestServer({ RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_PER_ACCOUNT_PER_MINUTE: '100000' });
  baseUrl = server.baseUrl;
});
afterAll(async () => {
  await server?.stop();
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const persisted = (query: string) => ({ persistedQuery: { version: 1, sha256Hash: sha256(query) } });

async function post(bearer: string | null, body: Record<string, unknown>): Promise<{ status: number; messages: string[]; data: any }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  const res = await fetch(`${baseUrl}/graphql`, { method: 'POST', headers, body: JSON.stringify(body) });
  const json = (await res.json()) as { data?: unknown; errors?: Array<{ message: string }> };
  return { status: res.status, messages: (json.errors ?? []).map((e) => e.message), data: json.data };
}

/** Registers `query` with `bearer` (text and hash), expecting it to run. */
async function register(bearer: string, query: string): Promise<void> {
  const res = await post(bearer, { query, extensions: persisted(query) });
  expect(res.status, res.messages.join()).toBe(200);
}

const expectNotFound = (res: { status: number; messages: string[] }) => {
  expect(res.status).toBe(400);
  expect(res.messages[0]).toMatch(/^PersistedQueryNotFound/);
};

describe('persisted queries per credential kind', () => {
  it("a client token cannot use a hash its account's secret key registered, nor the key the token's", async () => {
    const acct = await createAccount(baseUrl);
    const payment = await createExpressPayment(acct);
    const { token } = await mintToken(acct, payment.id);
    // Client tokens register automatically only where their trusted-documents mode is off (audit by default).
    expect((await acct.api.put('/graphql/settings', { trusted_documents: { client_token: 'off' } })).status).toBe(200);
    const byKey = `query($id: ID!) { paymentIntent(id: $id) { id status } } # key ${acct.id}`;
    await post(acct.sk, { query: byKey, variables: { id: payment.id }, extensions: persisted(byKey) });
    expect((await post(acct.sk, { variables: { id: payment.id }, extensions: persisted(byKey) })).data.paymentIntent.id).toBe(payment.id);
    expectNotFound(await post(token, { variables: { id: payment.id }, extensions: persisted(byKey) }));

    const byToken = `query($id: ID!) { paymentIntent(id: $id) { id } } # token ${acct.id}`;
    const sent = await post(token, { query: byToken, variables: { id: payment.id }, extensions: persisted(byToken) });
    expect(sent.status).toBe(200);
    expect((await post(token, { variables: { id: payment.id }, extensions: persisted(byToken) })).data.paymentIntent.id).toBe(payment.id);
    expectNotFound(await post(acct.sk, { variables: { id: payment.id }, extensions: persisted(byToken) }));
    // A publishable key is a credential of its own kind too.
    expectNotFound(await post(acct.pk, { variables: { id: payment.id }, extensions: persisted(byKey) }));
  });
});

describe('persisted queries under a flood', () => {
  it("keyless registrations store nothing and leave an account's hash usable", async () => {
    const acct = await createAccount(baseUrl);
    const mine = `{ account { id } } # mine ${acct.id}`;
    await register(acct.sk, mine);
    const before = persistedQueryStats();
    for (let i = 0; i < 300; i++) {
      // A text the caller may not run, and one it may: neither is stored.
      const query = i % 2 === 0 ? `{ account { id } } # flood ${i} ${acct.id}` : `mutation { createSandboxAccount(input: { name: "f${i}" }) { id } }`;
      const res = await post(null, { query, extensions: persisted(query) });
      expect([200, 401]).toContain(res.status);
    }
    expect(persistedQueryStats()).toEqual(before);
    expect((await post(acct.sk, { extensions: persisted(mine) })).data.account.id).toBe(acct.id);
    // Keyless, the hash alone is unknown (APQ clients then send the text), never the account's.
    expectNotFound(await post(null, { extensions: persisted(mine) }));
  });

  it("one account registering past its own bound evicts only its own, never another account's", async () => {
    const other = await createAccount(baseUrl);
    const theirs = `{ account { id name } } # theirs ${other.id}`;
    await register(other.sk, theirs);
    const busy = await createAccount(baseUrl);
    const first = `{ account { id } } # busy 0 ${busy.id}`;
    await register(busy.sk, first);
    // Past the per-account bound of 256 queries.
    for (let i = 1; i <= 300; i++) await register(busy.sk, `{ account { id } } # busy ${i} ${busy.id}`);
    expectNotFound(await post(busy.sk, { extensions: persisted(first) }));
    expect((await post(busy.sk, { extensions: persisted(`{ account { id } } # busy 300 ${busy.id}`) })).data.account.id).toBe(busy.id);
    expect((await post(other.sk, { extensions: persisted(theirs) })).data.account.id).toBe(other.id);
  });
});
