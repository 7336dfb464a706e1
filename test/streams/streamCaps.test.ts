import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import { ApiClient } from '../support/client';
import { startTestServer, type TestServer } from '../support/server';
import { waitFor } from '../support/wait';
import { openSse } from './support/sseClient';

/**
 * Issue 16, item 5: public SSE streams had no cap per client IP. SSE_MAX_STREAMS_PER_IP (2 here)
 * counts every stream of an IP; the one over it is answered 429 in the error envelope, before any
 * stream byte, and a place frees when a stream ends.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ SSE_MAX_STREAMS_PER_IP: '2' });
});
afterAll(async () => server?.stop());

it('the third public stream of an IP gets 429 rate_limit_exceeded with Retry-After; closing one frees a place', async () => {
  const { api } = await createAccount(server.baseUrl);
  const link = await api.post('/payment_links', { amount: 12_000 });
  expect(link.status, link.text).toBe(201);
  const paid = await new ApiClient(server.baseUrl).post(`/public/payment_links/${link.body.code}/payments`, { payment_method: 'multicaixa_reference' });
  expect(paid.status, paid.text).toBe(201);
  const url = `${server.baseUrl}/v1/public/payments/${paid.body.id}/events`;

  const first = await openSse(url);
  const second = await openSse(url);
  expect([first.status, second.status]).toEqual([200, 200]);
  const third = await openSse(url);
  expect(third.status).toBe(429);
  expect(Number(third.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  const body = JSON.parse(third.text!);
  expect(body.error.code).toBe('rate_limit_exceeded');
  expect(body.error.request_id).toMatch(/^req_/);

  first.close();
  await waitFor(async () => server.gateway.realtime.connections.openCounts().sse, (n) => n === 1);
  const again = await openSse(url);
  expect(again.status).toBe(200);
  again.close();
  second.close();
});
