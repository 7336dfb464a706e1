import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../support/client';
import { startTestServer, type TestServer } from '../support/server';

let server: TestServer;
beforeAll(async () => {
  // Default key limit (120/min); account creation limited to 3/min per IP for the per-IP test.
  server = await startTestServer({ ACCOUNT_CREATION_PER_MINUTE: '3' });
});
afterAll(async () => server?.stop());

describe('rate limiting', () => {
  it('counts down X-RateLimit-Remaining and answers the 121st request within a minute with 429', async () => {
    const anon = new ApiClient(server.baseUrl);
    const created = await anon.post('/sandbox/accounts', { name: 'busy' });
    expect(created.status).toBe(201);
    const api = anon.withKey(created.body.sk);
    const remaining: number[] = [];
    for (let i = 0; i < 120; i++) {
      const res = await api.get('/payment_methods');
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('120');
      const reset = Number(res.headers.get('x-ratelimit-reset'));
      expect(reset).toBeGreaterThanOrEqual(0);
      expect(reset).toBeLessThanOrEqual(60);
      remaining.push(Number(res.headers.get('x-ratelimit-remaining')));
    }
    expect(remaining).toEqual(Array.from({ length: 120 }, (_, i) => 119 - i));
    const limited = await api.get('/payment_methods');
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limit_exceeded');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
  });

  it('limits account creation per client IP', async () => {
    // Three accounts were allowed in this server's window (one by the test above).
    const anon = new ApiClient(server.baseUrl);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await anon.post('/sandbox/accounts', {})).status);
    expect(statuses.filter((s) => s === 201).length).toBe(2);
    const last = await anon.post('/sandbox/accounts', {});
    expect(last.status).toBe(429);
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });
});
