import { afterAll, beforeAll, expect, it } from 'vitest';
import { ApiClient } from '../support/client';
import { type TestServer } from '../support/server';
import { collect, errorCodes, gql, startGraphqlTestServer, wsClient } from './support';

/**
 * `createSandboxAccount` is held to the per-IP limit of `POST /sandbox/accounts`
 * (ACCOUNT_CREATION_PER_MINUTE), in the same bucket: a gateway of its own, with a limit of 3.
 */
let server: TestServer;

beforeAll(async () => {
  server = await startGraphqlTestServer({ ACCOUNT_CREATION_PER_MINUTE: '3' });
});
afterAll(async () => {
  await server?.stop();
});

it('shares the client IP\'s account-creation bucket with REST, counts every call (aliases too) and answers 429 like REST', async () => {
  const anon = new ApiClient(server.baseUrl);
  const rest = await anon.post('/sandbox/accounts', {});
  expect(rest.status).toBe(201);
  expect(rest.headers.get('x-ratelimit-limit')).toBe('3');

  const keyless = await gql(server.baseUrl, null, 'mutation { createSandboxAccount { id } }');
  expect(keyless.status, JSON.stringify(keyless.body)).toBe(200);
  expect(keyless.body.data.createSandboxAccount.id).toMatch(/^acct_/);
  expect(keyless.headers.get('x-ratelimit-limit')).toBe('3');
  expect(keyless.headers.get('x-ratelimit-remaining')).toBe('1');

  // With a key the request also counts on the key (its headers), and the account creation on the IP.
  const keyed = await gql(server.baseUrl, rest.body.sk, 'mutation { createSandboxAccount { id } }');
  expect(keyed.status).toBe(200);
  expect(keyed.body.data.createSandboxAccount.id).toMatch(/^acct_/);
  expect(keyed.headers.get('x-ratelimit-limit')).toBe('120');

  // The bucket is spent: two aliased calls are refused before anything runs.
  const aliases = await gql(server.baseUrl, null, 'mutation { a: createSandboxAccount { id } b: createSandboxAccount { id } }');
  expect(aliases.status).toBe(429);
  expect(errorCodes(aliases)).toEqual(['rate_limit_exceeded']);
  expect(aliases.body.data ?? null).toBeNull();
  expect(Number(aliases.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(aliases.headers.get('x-ratelimit-limit')).toBe('3');
  expect(aliases.headers.get('x-ratelimit-remaining')).toBe('0');
  expect((await anon.post('/sandbox/accounts', {})).status).toBe(429);

  const keyedOver = await gql(server.baseUrl, rest.body.sk, 'mutation { createSandboxAccount { id } }');
  expect(keyedOver.status).toBe(429);
  expect(errorCodes(keyedOver)).toEqual(['rate_limit_exceeded']);
  expect(keyedOver.body.data ?? null).toBeNull();
  expect(Number(keyedOver.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

  // Over WebSocket too (a key is needed to connect there): the same bucket refuses the call.
  const client = wsClient(server.baseUrl, rest.body.sk);
  try {
    const messages = await collect(client, 'mutation { createSandboxAccount { id } }', {}, (m) => m.length >= 1, 10_000);
    expect(messages[0]?.errors?.[0]?.extensions?.code).toBe('rate_limit_exceeded');
    expect(messages.some((m) => m.data?.createSandboxAccount)).toBe(false);
  } finally {
    await client.dispose();
  }
});
