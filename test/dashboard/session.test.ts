import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Client } from 'graphql-ws';
import { DashboardSessionModel } from '../../src/domain/sessions/sessionModel';
import { hashSecret } from '../../src/domain/accounts/secrets';
import { createAccount, type TestAccount } from '../support/accounts';
import { type TestServer } from '../support/server';
import { createPayment, referenceBody } from '../support/payments';
import { answer, COOKIE_FLAGS, cookieGql, cookieWsClient, signIn, upgradeAnswer } from './sessionSupport';
import { sharedGateway } from '../support/server';

/**
 * Issue 17, item 1: the dashboard signs in once with a key and then holds a session cookie. Each
 * refusal of the contract decisions ("Sandbox dashboard") over HTTP and WebSocket, against the real
 * gateway: cross-origin form posts, another origin's WebSocket, an expired session, a revoked key, a
 * restricted key's missing permission, sign-out.
 */
vi.setConfig({ testTimeout: 60_000 });

let server: TestServer;
let origin: string;
beforeAll(async () => {
  server = await sharedGateway();
  origin = server.baseUrl; // PUBLIC_BASE_URL is the default http://localhost:PORT: the same server
}, 60_000);
afterAll(async () => server?.stop(), 60_000);

const ACCOUNT = '{ account { id name } }';
const session = (cookie: string, headers: Record<string, string> = {}, method = 'GET') =>
  fetch(`${server.baseUrl}/dashboard/session`, { method, headers: { cookie, ...headers } }).then(answer);

async function restrictedKey(acct: TestAccount, permissions: string[]): Promise<{ id: string; secret: string }> {
  const created = await acct.api.post('/api_keys', { name: 'dashboard', permissions });
  expect(created.status, created.text).toBe(201);
  return { id: created.body.id, secret: created.body.secret };
}

/** The first message of a subscription (or its errors). */
function firstMessage(client: Client, query: string, variables: Record<string, unknown>): Promise<any> {
  return new Promise((resolve, reject) => {
    const stop = client.subscribe(
      { query, variables },
      { next: (m) => (stop(), resolve(m)), error: (e) => resolve({ errors: Array.isArray(e) ? e : [String(e)] }), complete: () => reject(new Error('completed without a message')) },
    );
  });
}

describe('sign in', () => {
  it('sets the session cookie with the exact flags and describes the session, never the key', async () => {
    const acct = await createAccount(server.baseUrl, 'Loja Dashboard');
    const res = await signIn(server.baseUrl, acct.sk);
    expect(res.status, res.text).toBe(200);
    expect(res.setCookie).toMatch(COOKIE_FLAGS);
    expect(res.body).toMatchObject({ object: 'dashboard_session', account: { id: acct.id, name: 'Loja Dashboard' }, key: { type: 'secret' } });
    expect(Object.keys(res.body).sort()).toEqual(['account', 'expires_at', 'key', 'object']);
    expect(Object.keys(res.body.key).sort()).toEqual(['id', 'permissions', 'type']);
    const hours = (Date.parse(res.body.expires_at) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(11.9);
    expect(hours).toBeLessThanOrEqual(12);
    expect(res.text).not.toContain(acct.sk);
    expect(res.setCookie).not.toContain(acct.sk);

    // The database holds the cookie value's hash only.
    const value = COOKIE_FLAGS.exec(res.setCookie!)![1]!;
    const stored = await DashboardSessionModel.findById(hashSecret(value)).lean();
    expect(stored).toMatchObject({ account_id: acct.id, key_id: res.body.key.id });
    expect(JSON.stringify(await DashboardSessionModel.find({ key_id: res.body.key.id }).lean())).not.toContain(value);

    const described = await session(res.cookie!);
    expect(described.status).toBe(200);
    expect(described.body).toEqual(res.body);
    expect(described.text).not.toContain(acct.sk);
    expect((await session('pgw_session=nope')).status).toBe(401);
    expect((await fetch(`${server.baseUrl}/dashboard/session`).then(answer)).body.error.code).toBe('authentication_failed');
  });

  it('refuses a wrong or revoked key (401), a publishable key (403), another origin (403) and non-JSON bodies (400)', async () => {
    const acct = await createAccount(server.baseUrl);
    const wrong = await signIn(server.baseUrl, 'sk_test_' + 'x'.repeat(32));
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ error: { code: 'authentication_failed', message: expect.any(String), request_id: expect.any(String) } });
    expect(wrong.setCookie).toBeNull();

    const revoked = await restrictedKey(acct, ['payment_intents:read']);
    expect((await acct.api.delete(`/api_keys/${revoked.id}`)).status).toBe(200);
    expect((await signIn(server.baseUrl, revoked.secret)).body.error.code).toBe('authentication_failed');

    const pk = await signIn(server.baseUrl, acct.pk);
    expect(pk.status).toBe(403);
    expect(pk.body.error.code).toBe('permission_denied');
    expect(pk.setCookie).toBeNull();

    const foreign = await signIn(server.baseUrl, acct.sk, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.code).toBe('permission_denied');
    expect(foreign.setCookie).toBeNull();

    // What a form on another site can send: never JSON.
    for (const [type, body] of [
      ['application/x-www-form-urlencoded', `key=${acct.sk}`],
      ['text/plain', JSON.stringify({ key: acct.sk })],
      ['multipart/form-data; boundary=x', `--x\r\nContent-Disposition: form-data; name="key"\r\n\r\n${acct.sk}\r\n--x--\r\n`],
    ] as const) {
      const res = await fetch(`${server.baseUrl}/dashboard/session`, { method: 'POST', headers: { 'content-type': type }, body }).then(answer);
      expect(res.status, type).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect(res.headers.get('set-cookie')).toBeNull();
    }
    const noKey = await fetch(`${server.baseUrl}/dashboard/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }).then(answer);
    expect(noKey.status).toBe(400);
    expect(noKey.body.error.code).toBe('invalid_request');
  });
});

describe('the session on POST /graphql', () => {
  it('authenticates as its key, counted in the session’s own window (budget.test.ts)', async () => {
    const acct = await createAccount(server.baseUrl);
    const { cookie } = await signIn(server.baseUrl, acct.sk);
    const res = await cookieGql(server.baseUrl, cookie!, ACCOUNT, {}, { headers: { origin } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.account.id).toBe(acct.id);
    expect(res.headers.get('x-ratelimit-limit')).toBe('600');
    // The apollo-require-preflight header is the other CSRF-safe form.
    const preflight = await cookieGql(server.baseUrl, cookie!, ACCOUNT, {}, { headers: { 'apollo-require-preflight': 'true' } });
    expect(preflight.body.data.account.id).toBe(acct.id);
  });

  it('refuses cross-site form posts and other origins, in GraphQL’s error shape', async () => {
    const acct = await createAccount(server.baseUrl);
    const { cookie } = await signIn(server.baseUrl, acct.sk);
    for (const raw of [
      { type: 'application/x-www-form-urlencoded', body: `query=${encodeURIComponent(ACCOUNT)}` },
      { type: 'text/plain', body: JSON.stringify({ query: ACCOUNT }) },
    ]) {
      const res = await cookieGql(server.baseUrl, cookie!, ACCOUNT, {}, { raw, headers: { origin: 'https://evil.example' } });
      expect(res.status, raw.type).toBe(400);
      expect(res.body.errors[0].extensions.code).toBe('invalid_request');
      expect(res.body.data).toBeUndefined();
    }
    const foreign = await cookieGql(server.baseUrl, cookie!, ACCOUNT, {}, { headers: { origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    expect(foreign.body.errors[0].extensions.code).toBe('permission_denied');
    // A cross-origin request with the cookie is never granted CORS.
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
  });

  it("a restricted key's session keeps its permissions", async () => {
    const acct = await createAccount(server.baseUrl);
    const key = await restrictedKey(acct, ['payment_intents:read']);
    const { cookie } = await signIn(server.baseUrl, key.secret);
    const denied = await cookieGql(server.baseUrl, cookie!, ACCOUNT);
    expect(denied.body.errors[0].extensions.code).toBe('permission_denied');
    const allowed = await cookieGql(server.baseUrl, cookie!, '{ paymentIntents(first: 1) { edges { node { id } } } }');
    expect(allowed.body.errors).toBeUndefined();
    const mutation = await cookieGql(server.baseUrl, cookie!, 'mutation { advanceSandboxClock(input: {seconds: 60}) { offsetSeconds } }');
    expect(mutation.body.errors[0].extensions.code).toBe('permission_denied');
  });

  it('an expired session is 401 everywhere', async () => {
    const acct = await createAccount(server.baseUrl);
    const { cookie, setCookie } = await signIn(server.baseUrl, acct.sk);
    const value = COOKIE_FLAGS.exec(setCookie!)![1]!;
    await DashboardSessionModel.updateOne({ _id: hashSecret(value) }, { $set: { expires_at: new Date(Date.now() - 1000) } });
    expect((await session(cookie!)).status).toBe(401);
    const res = await cookieGql(server.baseUrl, cookie!, ACCOUNT);
    expect(res.status).toBe(401);
    expect(res.body.errors[0].extensions.code).toBe('authentication_failed');
    expect(await upgradeAnswer(server.baseUrl, { cookie: cookie!, origin })).toBe('open'); // the upgrade is fine…
    const closes: number[] = [];
    const client = cookieWsClient(server.baseUrl, cookie!, origin, (code) => closes.push(code));
    const refused = await firstMessage(client, ACCOUNT, {}); // …connection_init is not
    expect(refused.data).toBeUndefined();
    expect(closes).toEqual([4401]);
  });
});

describe('the session on WebSocket /graphql', () => {
  it('refuses the upgrade from another origin (403) and streams to its own', async () => {
    const acct = await createAccount(server.baseUrl);
    const { cookie } = await signIn(server.baseUrl, acct.sk);
    const refused = await upgradeAnswer(server.baseUrl, { cookie: cookie!, origin: 'https://evil.example' });
    expect(refused).toMatchObject({ status: 403 });
    expect(JSON.parse((refused as { body: string }).body).error.code).toBe('permission_denied');
    expect(await upgradeAnswer(server.baseUrl, { cookie: cookie! })).toMatchObject({ status: 403 });

    const pi = await createPayment(acct.api, referenceBody());
    const client = cookieWsClient(server.baseUrl, cookie!, origin);
    try {
      const first = await firstMessage(client, 'subscription($id: ID!) { paymentIntentUpdated(id: $id) { snapshot paymentIntent { id status } } }', { id: pi.id });
      expect(first.data.paymentIntentUpdated).toEqual({ snapshot: true, paymentIntent: { id: pi.id, status: 'PENDING' } });
    } finally {
      await client.dispose();
    }
  });

  it("revoking the key ends its sessions: 401 over HTTP, and its open socket closed", async () => {
    const acct = await createAccount(server.baseUrl);
    const key = await restrictedKey(acct, ['payment_intents:read']);
    const { cookie } = await signIn(server.baseUrl, key.secret);
    const pi = await createPayment(acct.api, referenceBody());
    let onClose!: (code: number) => void;
    const closed = new Promise<number>((resolve) => (onClose = resolve));
    const client = cookieWsClient(server.baseUrl, cookie!, origin, (code) => onClose(code));
    // A subscription stays open while the key is revoked.
    const first = await new Promise<any>((resolve) => {
      client.subscribe({ query: 'subscription($id: ID!) { paymentIntentUpdated(id: $id) { snapshot } }', variables: { id: pi.id } }, { next: resolve, error: resolve, complete: () => undefined });
    });
    expect(first.data.paymentIntentUpdated.snapshot).toBe(true);

    expect((await acct.api.delete(`/api_keys/${key.id}`)).status).toBe(200);
    expect(await closed).toBe(4401);
    expect(await DashboardSessionModel.countDocuments({ key_id: key.id })).toBe(0);
    expect((await session(cookie!)).status).toBe(401);
    expect((await cookieGql(server.baseUrl, cookie!, '{ paymentIntent(id: "x") { id } }')).status).toBe(401);
    await client.dispose();
  });
});

describe('sign out', () => {
  it('deletes the session: the old cookie is 401 on every route, and its open socket is closed', async () => {
    const acct = await createAccount(server.baseUrl);
    const { cookie } = await signIn(server.baseUrl, acct.sk);
    const pi = await createPayment(acct.api, referenceBody());
    let onClose!: (close: [number, string]) => void;
    const closed = new Promise<[number, string]>((resolve) => (onClose = resolve));
    const client = cookieWsClient(server.baseUrl, cookie!, origin, (code, reason) => onClose([code, reason]));
    const first = await new Promise<any>((resolve) => {
      client.subscribe({ query: 'subscription($id: ID!) { paymentIntentUpdated(id: $id) { snapshot } }', variables: { id: pi.id } }, { next: resolve, error: resolve, complete: () => undefined });
    });
    expect(first.data.paymentIntentUpdated.snapshot).toBe(true);

    expect((await session(cookie!, { origin: 'https://evil.example' }, 'DELETE')).status).toBe(403);
    const out = await session(cookie!, { origin }, 'DELETE');
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ object: 'dashboard_session', deleted: true });
    expect(out.headers.get('set-cookie')).toBe('pgw_session=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0');
    expect(await closed).toEqual([4401, 'dashboard session ended']);
    await client.dispose();
    expect((await session(cookie!)).status).toBe(401);
    expect((await cookieGql(server.baseUrl, cookie!, ACCOUNT)).status).toBe(401);
    expect((await session(cookie!, {}, 'DELETE')).status).toBe(401);
  });
});
