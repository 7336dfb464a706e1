import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import { startTestServer, type TestServer } from '../support/server';

/**
 * Issue 16, item 5: rate limits were per key only, and keys are free, so three fresh keys gave an
 * account three times the requests. The account's keys now share a window of their own
 * (RATE_LIMIT_PER_ACCOUNT_PER_MINUTE, small here), counted in the database like the key's.
 */
let server: TestServer;
const ACCOUNT_LIMIT = 10;
beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_PER_ACCOUNT_PER_MINUTE: String(ACCOUNT_LIMIT) });
});
afterAll(async () => server?.stop());

it("three fresh keys of one account share the account's limit; over it, 429 rate_limit_exceeded with Retry-After, the headers still the key's", async () => {
  const acct = await createAccount(server.baseUrl);
  const keys = [];
  for (let i = 0; i < 3; i++) {
    const created = await acct.api.post('/api_keys', { name: `k${i}`, permissions: ['payment_intents:read'] });
    expect(created.status, created.text).toBe(201);
    keys.push(acct.api.withKey(created.body.secret));
  }
  // The three key creations were the account's first three requests of the window.
  const statuses: number[] = [];
  const refusals = [];
  for (let round = 0; round < 4; round++) {
    for (const api of keys) {
      const res = await api.get('/payment_methods');
      statuses.push(res.status);
      if (res.status === 429) refusals.push(res);
      // Each key has made at most 4 of its own 120: the headers describe the key's window.
      expect(res.headers.get('x-ratelimit-limit')).toBe('120');
      expect(Number(res.headers.get('x-ratelimit-remaining'))).toBe(120 - (round + 1));
    }
  }
  expect(statuses.filter((s) => s === 200)).toHaveLength(ACCOUNT_LIMIT - 3);
  expect(statuses.filter((s) => s === 429)).toHaveLength(12 - (ACCOUNT_LIMIT - 3));
  for (const res of refusals) {
    expect(res.body.error.code).toBe('rate_limit_exceeded');
    expect(res.body.error.message).toContain("all of this account's API keys together");
    const retry = Number(res.headers.get('retry-after'));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
  }
  // The account's full secret key and GraphQL share the same window.
  expect((await acct.api.get('/account')).status).toBe(429);
  const graphql = await fetch(`${server.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${acct.sk}` },
    body: JSON.stringify({ query: '{ account { id } }' }),
  });
  expect(graphql.status).toBe(429);

  // Another account is not affected.
  const other = await createAccount(server.baseUrl);
  expect((await other.api.get('/payment_methods')).status).toBe(200);
});

it("the account limit defaults to five keys' worth, follows RATE_LIMIT_PER_MINUTE, and refuses a bad value", async () => {
  const { loadConfig } = await import('../../src/config');
  expect(loadConfig({}).rateLimitPerAccountPerMinute).toBe(600);
  expect(loadConfig({ RATE_LIMIT_PER_MINUTE: '1000' }).rateLimitPerAccountPerMinute).toBe(5000);
  expect(loadConfig({ RATE_LIMIT_PER_ACCOUNT_PER_MINUTE: '50' }).rateLimitPerAccountPerMinute).toBe(50);
  expect(() => loadConfig({ RATE_LIMIT_PER_ACCOUNT_PER_MINUTE: '0' })).toThrow(/RATE_LIMIT_PER_ACCOUNT_PER_MINUTE/);
  expect(() => loadConfig({ WS_MAX_LIFETIME_SECONDS: '0' })).toThrow(/WS_MAX_LIFETIME_SECONDS/);
  expect(() => loadConfig({ REQUEST_LOG_RETENTION_DAYS: 'soon' })).toThrow(/REQUEST_LOG_RETENTION_DAYS/);
});
