import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import { type TestServer } from '../support/server';
import { collect, errorCodes, gql, wsClient, startGraphqlTestServer } from './support';

/** The key's rate limit, shared by REST, GraphQL over HTTP (one per request) and WebSocket operations. */
let server: TestServer;

beforeAll(async () => {
  server = await startGraphqlTestServer({ RATE_LIMIT_PER_MINUTE: '4' });
});
afterAll(async () => {
  await server?.stop();
});

it('answers 429 rate_limit_exceeded with Retry-After once the key is over its limit, over HTTP and WebSocket', async () => {
  const acct = await createAccount(server.baseUrl);
  expect((await acct.api.get('/account')).status).toBe(200);
  for (let i = 0; i < 3; i++) expect((await gql(server.baseUrl, acct.sk, '{ account { id } }')).status).toBe(200);
  const res = await gql(server.baseUrl, acct.sk, '{ account { id } }');
  expect(res.status).toBe(429);
  expect(errorCodes(res)).toEqual(['rate_limit_exceeded']);
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
  // REST sees the same bucket.
  expect((await acct.api.get('/account')).status).toBe(429);

  const client = wsClient(server.baseUrl, acct.sk);
  try {
    const messages = await collect(client, 'subscription { events { id } }', {}, () => true, 10_000);
    expect(messages[0]?.errors?.[0]?.extensions?.code).toBe('rate_limit_exceeded');
  } finally {
    await client.dispose();
  }
});
