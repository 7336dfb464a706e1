import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import { ApiClient, type ApiResponse } from '../support/client';
import { startTestServer, type TestServer } from '../support/server';

/**
 * The spec: every response carries X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset.
 * Answers that no key counts (401, maintenance, unknown routes without a valid key) are counted per
 * client IP, with the public routes' per-IP limit (PUBLIC_RATE_LIMIT_PER_MINUTE, 4 here).
 */
const IP_LIMIT = 4;

function rateHeaders(res: { headers: Headers }) {
  const read = (name: string) => res.headers.get(name);
  return { limit: read('x-ratelimit-limit'), remaining: read('x-ratelimit-remaining'), reset: read('x-ratelimit-reset') };
}

function expectRateHeaders(res: ApiResponse | { status: number; headers: Headers }, limit: number, remaining: number): void {
  const h = rateHeaders(res);
  expect(h, `${res.status} answer`).toEqual({ limit: String(limit), remaining: String(remaining), reset: expect.stringMatching(/^[0-9]+$/) });
  expect(Number(h.reset)).toBeLessThanOrEqual(60);
}

describe('rate-limit headers on answers no key counted', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ PUBLIC_RATE_LIMIT_PER_MINUTE: String(IP_LIMIT) });
  });
  afterAll(async () => server?.stop());

  it('401s, unknown routes and undecodable paths count per client IP, then 429 with Retry-After', async () => {
    const anon = new ApiClient(server.baseUrl);
    const noKey = await anon.get('/payment_intents');
    expect(noKey.status).toBe(401);
    expectRateHeaders(noKey, IP_LIMIT, IP_LIMIT - 1);

    const badKey = await anon.withKey(`sk_test_${'x'.repeat(32)}`).get('/account');
    expect(badKey.status).toBe(401);
    expectRateHeaders(badKey, IP_LIMIT, IP_LIMIT - 2);

    const unknown = await anon.get('/no_such_route');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('resource_not_found');
    expectRateHeaders(unknown, IP_LIMIT, IP_LIMIT - 3);

    const undecodable = await anon.get('/payment_intents/%zz');
    expect(undecodable.status).toBe(404);
    expectRateHeaders(undecodable, IP_LIMIT, 0);

    const limited = await anon.get('/payment_intents');
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limit_exceeded');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expectRateHeaders(limited, IP_LIMIT, 0);

    // GraphQL's refusals before execution too.
    const gql = await fetch(`${server.baseUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ account { id } }"}' });
    expect(gql.status).toBe(429);
    expectRateHeaders(gql, IP_LIMIT, 0);

    // A valid key is counted on its own bucket, not the IP's: the IP's exhaustion does not touch it.
    const acct = await createAccount(server.baseUrl);
    const ok = await acct.api.get('/account');
    expect(ok.status).toBe(200);
    expectRateHeaders(ok, 120, 119);
  });

  it('an unknown route with a valid key counts on the key and is in its request log', async () => {
    const acct = await createAccount(server.baseUrl);
    const unknown = await acct.api.get('/no_such_route');
    expect(unknown.status).toBe(404);
    expectRateHeaders(unknown, 120, 119);
    const logs = await acct.api.get('/logs');
    expectRateHeaders(logs, 120, 118);
    expect(logs.body.data.map((l: { request_id: string }) => l.request_id)).toContain(unknown.headers.get('request-id'));
  });
});

describe('rate-limit headers in maintenance', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ MAINTENANCE_MODE: 'true', PUBLIC_RATE_LIMIT_PER_MINUTE: String(IP_LIMIT) });
  });
  afterAll(async () => server?.stop());

  it('503 maintenance answers carry them (REST and GraphQL), counted per client IP', async () => {
    const anon = new ApiClient(server.baseUrl);
    const rest = await anon.withKey(`sk_test_${'y'.repeat(32)}`).get('/payment_methods');
    expect(rest.status).toBe(503);
    expect(rest.body.error.code).toBe('maintenance');
    expect(rest.headers.get('retry-after')).toBe('60');
    expectRateHeaders(rest, IP_LIMIT, IP_LIMIT - 1);

    const open = await anon.post('/sandbox/accounts', { name: 'during maintenance' });
    expect(open.status).toBe(503);
    expectRateHeaders(open, IP_LIMIT, IP_LIMIT - 2);

    const gql = await fetch(`${server.baseUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ account { id } }"}' });
    expect(gql.status).toBe(503);
    expectRateHeaders(gql, IP_LIMIT, IP_LIMIT - 3);
  });
});
