import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import { startTestServer, type TestServer } from '../support/server';
import { signIn } from './sessionSupport';

/**
 * Issue 17, item 1: behind https (PUBLIC_BASE_URL), the session cookie is `Secure`, and only that
 * origin may sign in (a gateway with PUBLIC_BASE_URL set accepts no other, loopback included). The
 * session routes count in the public routes' per-IP bucket.
 */
const PUBLIC = 'https://sandbox.example.ao';
/** The per-IP limit of the public routes, which the session routes count in. */
const PER_IP = 6;
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ PUBLIC_BASE_URL: PUBLIC, PUBLIC_RATE_LIMIT_PER_MINUTE: String(PER_IP) });
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

it('counts each session request in the per-IP bucket of the public routes: 429 over it', async () => {
  const answers: Response[] = [];
  // This file's other test used at most two places of the window; PER_IP + 1 more calls must cross it.
  for (let i = 0; i <= PER_IP; i++) answers.push(await fetch(`${server.baseUrl}/dashboard/session`));
  expect(answers[0]!.status).toBe(401);
  expect(answers[0]!.headers.get('x-ratelimit-limit')).toBe(String(PER_IP));
  const refused = answers.at(-1)!;
  expect(refused.status).toBe(429);
  expect(refused.headers.get('retry-after')).toBeTruthy();
  expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('rate_limit_exceeded');
});
