import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import { ApiClient } from '../support/client';
import { advanceClock, createPayment, expressBody } from '../support/payments';
import { errorCodes, gql, gqlData, startGraphqlTestServer } from './support';

/** The dashboard's lists that REST has no form of: logs' filters, checkout sessions, keys' last use. */

let baseUrl: string;
let stop: () => Promise<void>;

beforeAll(async () => {
  const server = await startGraphqlTestServer({ RATE_LIMIT_PER_MINUTE: '100000' });
  baseUrl = server.baseUrl;
  stop = server.stop;
});

afterAll(() => stop());

const LOGS = `query ($filter: LogFilter, $includeDashboard: Boolean) {
  logs(first: 100, filter: $filter, includeDashboard: $includeDashboard) { method path status source }
}`;

describe('Query.logs(filter:)', () => {
  it('filters by method, status class, path prefix and source', async () => {
    const acct = await createAccount(baseUrl);
    await createPayment(acct.api, expressBody());
    expect((await acct.api.get('/payment_intents/pi_missing')).status).toBe(404);
    expect((await acct.api.get('/payment_links')).status).toBe(200);
    const logs = async (filter: Record<string, unknown>) =>
      (await gqlData(baseUrl, acct.sk, LOGS, { filter })).logs as Array<{ method: string; path: string; status: number; source: string }>;

    const posts = await logs({ method: 'post' });
    expect(posts.length).toBeGreaterThan(0);
    expect(posts.every((l) => l.method === 'POST')).toBe(true);
    const clientErrors = await logs({ statusClass: 'CLIENT_ERROR_4XX' });
    expect(clientErrors.map((l) => l.status)).toEqual([404]);
    const links = await logs({ pathPrefix: '/v1/payment_links' });
    expect(links.map((l) => `${l.method} ${l.path}`)).toEqual(['GET /v1/payment_links']);
    // By whole segments, and as text, not a pattern.
    expect(await logs({ pathPrefix: '/v1/payment_' })).toEqual([]);
    expect(await logs({ pathPrefix: '/v1/payment.links' })).toEqual([]);
    expect((await logs({ pathPrefix: '/v1/payment_intents' })).map((l) => l.path)).toEqual(['/v1/payment_intents/pi_missing', '/v1/payment_intents']);
    expect((await logs({ source: 'API' })).every((l) => l.source === 'API')).toBe(true);
    expect(await logs({ source: 'DASHBOARD' })).toEqual([]);
    // Every condition together.
    expect((await logs({ method: 'GET', statusClass: 'SUCCESS_2XX', pathPrefix: '/v1/payment_links' })).map((l) => l.path)).toEqual(['/v1/payment_links']);
  });

  it('refuses a method or a path that is not one, in words naming the field', async () => {
    const acct = await createAccount(baseUrl);
    for (const [filter, field] of [[{ method: 'GET /x' }, 'Method'], [{ pathPrefix: 'payment_intents' }, 'Path']] as const) {
      const res = await gql(baseUrl, acct.sk, LOGS, { filter });
      expect(errorCodes(res)).toEqual(['invalid_request']);
      expect(res.body.errors?.[0]?.message).toMatch(new RegExp(`^${field}: `));
    }
  });
});

const SESSIONS = `query ($first: Int, $after: String, $status: CheckoutSessionStatus) {
  checkoutSessions(first: $first, after: $after, status: $status) {
    nodes { id status amount }
    pageInfo { hasNextPage hasPreviousPage endCursor }
  }
}`;

describe('Query.checkoutSessions', () => {
  it('lists the account’s sessions newest first, by status, a page at a time', async () => {
    const acct = await createAccount(baseUrl);
    const make = async (amount: number) => {
      const res = await acct.api.post('/checkout/sessions', { amount });
      expect(res.status, res.text).toBe(201);
      return res.body.id as string;
    };
    const old = [await make(1000), await make(2000)];
    await advanceClock(acct.api, 31 * 60);
    const fresh = await make(3000);
    const other = await createAccount(baseUrl);
    await other.api.post('/checkout/sessions', { amount: 4000 });

    const list = async (variables: Record<string, unknown>) => (await gqlData(baseUrl, acct.sk, SESSIONS, variables)).checkoutSessions;
    const all = await list({ first: 20 });
    expect(all.nodes.map((s: { id: string }) => s.id)).toEqual([fresh, old[1], old[0]]);
    expect(all.pageInfo.hasNextPage).toBe(false);
    // Past their 30 minutes the old ones are EXPIRED, whether or not their timer has run yet.
    expect((await list({ status: 'OPEN' })).nodes.map((s: { id: string }) => s.id)).toEqual([fresh]);
    expect((await list({ status: 'EXPIRED' })).nodes.map((s: { id: string }) => s.id)).toEqual([old[1], old[0]]);
    expect((await list({ status: 'COMPLETED' })).nodes).toEqual([]);

    const first = await list({ first: 2 });
    expect(first.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const second = await list({ first: 2, after: first.pageInfo.endCursor });
    expect(second.nodes.map((s: { id: string }) => s.id)).toEqual([old[0]]);
    expect(second.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
  });

  it('needs checkout_sessions:read', async () => {
    const acct = await createAccount(baseUrl);
    const key = await acct.api.post('/api_keys', { name: 'payments only', permissions: ['payment_intents:read'] });
    expect(key.status, key.text).toBe(201);
    expect(errorCodes(await gql(baseUrl, key.body.secret, SESSIONS, {}))).toEqual(['permission_denied']);
  });
});

describe('ApiKey.lastUsedAt', () => {
  it('is null until a key is used, then the minute of its last request', async () => {
    const acct = await createAccount(baseUrl);
    const created = await acct.api.post('/api_keys', { name: 'reader', permissions: ['payment_intents:read'] });
    expect(created.status, created.text).toBe(201);
    const KEYS = '{ apiKeys { id lastUsedAt } }';
    const lastUsed = async () => ((await gqlData(baseUrl, acct.sk, KEYS)).apiKeys as Array<{ id: string; lastUsedAt: string | null }>).find((k) => k.id === created.body.id)!.lastUsedAt;
    expect(await lastUsed()).toBeNull();

    const before = Date.now();
    expect((await new ApiClient(baseUrl, created.body.secret).get('/payment_intents')).status).toBe(200);
    const used = Date.parse((await lastUsed())!);
    expect(used).toBeGreaterThanOrEqual(before - 1000);
    expect(used).toBeLessThanOrEqual(Date.now());

    // The REST key is unchanged: no such field there.
    const listed = await acct.api.get('/api_keys');
    expect(listed.body.data.find((k: { id: string }) => k.id === created.body.id)).not.toHaveProperty('last_used_at');
  });
});
