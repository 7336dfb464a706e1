import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import { startTestServer, type TestServer } from '../support/server';
import { signIn } from './sessionSupport';

/**
 * Issue 17, item 1: behind https (PUBLIC_BASE_URL), the session cookie is `Secure`, and only that
 * origin may sign in (a gateway with PUBLIC_BASE_URL set accepts no other, loopback included).
 */
const PUBLIC = 'https://sandbox.example.ao';
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ PUBLIC_BASE_URL: PUBLIC });
}, 60_000);
afterAll(async () => server?.stop(), 60_000);

it('adds Secure when PUBLIC_BASE_URL is https, and takes that origin only', async () => {
  const acct = await createAccount(server.baseUrl);
  const res = await signIn(server.baseUrl, acct.sk, { origin: PUBLIC });
  expect(res.status, res.text).toBe(200);
  expect(res.setCookie).toMatch(/^pgw_session=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/; Secure$/);
  const local = await signIn(server.baseUrl, acct.sk, { origin: server.baseUrl });
  expect(local.status).toBe(403);
  expect(local.body.error.code).toBe('permission_denied');
  expect(local.setCookie).toBeNull();
});
