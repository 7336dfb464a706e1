import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAccount } from '../support/accounts';
import { sharedGateway, type TestServer } from '../support/server';
import { cookieGql, cookieWsClient, signIn } from './sessionSupport';

/**
 * Issue 58, "Its own budget": a dashboard session's requests count in the session's own window
 * (DASHBOARD_RATE_LIMIT_PER_MINUTE), never in the key's API budget (RATE_LIMIT_PER_MINUTE), and are
 * still limited: 429 in the envelope over it. The key's budget is set low and the session's a little
 * over the 150 requests the first test makes.
 */
vi.setConfig({ testTimeout: 120_000 });

const ACCOUNT = '{ account { id } }';
const KEY_LIMIT = 20;
const SESSION_LIMIT = 160;

let server: TestServer;
beforeAll(async () => {
  server = await sharedGateway({ RATE_LIMIT_PER_MINUTE: String(KEY_LIMIT), DASHBOARD_RATE_LIMIT_PER_MINUTE: String(SESSION_LIMIT) });
}, 120_000);
afterAll(async () => server?.stop(), 60_000);

/** A new account's session with its whole budget spent (SESSION_LIMIT requests, each let through). */
async function spentSession() {
  const acct = await createAccount(server.baseUrl);
  const { cookie } = await signIn(server.baseUrl, acct.sk);
  const answers = await Promise.all(Array.from({ length: SESSION_LIMIT }, () => cookieGql(server.baseUrl, cookie!, ACCOUNT)));
  expect(answers.filter((a) => a.status !== 200)).toEqual([]);
  return { acct, cookie: cookie! };
}

describe('a dashboard session’s budget', () => {
  it('lets 150 dashboard requests through in a minute while the key’s own budget stays untouched', async () => {
    const acct = await createAccount(server.baseUrl);
    const { cookie } = await signIn(server.baseUrl, acct.sk);
    const answers = await Promise.all(Array.from({ length: 150 }, () => cookieGql(server.baseUrl, cookie!, ACCOUNT)));
    expect(answers.map((a) => a.status)).toEqual(Array(150).fill(200));
    expect(answers.every((a) => a.body.data.account.id === acct.id)).toBe(true);
    // Their headers describe the session's window, 150 spent.
    const remaining = answers.map((a) => Number(a.headers.get('x-ratelimit-remaining')));
    expect(answers[0]!.headers.get('x-ratelimit-limit')).toBe(String(SESSION_LIMIT));
    expect(Math.min(...remaining)).toBe(SESSION_LIMIT - 150);

    // The key's first API call of the minute: its whole budget is left.
    const api = await acct.api.get('/account');
    expect(api.status, api.text).toBe(200);
    expect(api.headers.get('x-ratelimit-limit')).toBe(String(KEY_LIMIT));
    expect(api.headers.get('x-ratelimit-remaining')).toBe(String(KEY_LIMIT - 1));
  });

  it('refuses a session over its own limit with 429 and the envelope, the key’s API calls counted apart', async () => {
    const { acct, cookie } = await spentSession();
    const refused = await cookieGql(server.baseUrl, cookie, ACCOUNT);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const [error] = refused.body.errors;
    expect(error.extensions.code).toBe('rate_limit_exceeded');
    expect(error.extensions.request_id).toMatch(/^req_/);
    expect(error.message).toMatch(new RegExp(`at most ${SESSION_LIMIT} per minute for this dashboard session`));

    // The key itself still works, counted in its own window: its first call of the minute.
    const api = await acct.api.get('/account');
    expect(api.status, api.text).toBe(200);
    expect(api.headers.get('x-ratelimit-remaining')).toBe(String(KEY_LIMIT - 1));

    // Another session of the same key has a budget of its own.
    const other = await signIn(server.baseUrl, acct.sk);
    expect((await cookieGql(server.baseUrl, other.cookie!, ACCOUNT)).status).toBe(200);
  });

  it('refuses a WebSocket operation over the session’s limit with the same error', async () => {
    const { cookie } = await spentSession();
    const client = cookieWsClient(server.baseUrl, cookie, server.baseUrl);
    try {
      const result = await new Promise<any>((resolve, reject) => {
        const stop = client.subscribe({ query: ACCOUNT }, { next: (m) => (stop(), resolve(m)), error: (e) => resolve({ errors: e }), complete: () => reject(new Error('completed without an answer')) });
      });
      const errors = Array.isArray(result.errors) ? result.errors : [result.errors];
      expect(errors[0].extensions?.code ?? errors[0].message).toMatch(/rate_limit_exceeded/);
    } finally {
      await client.dispose();
    }
  });
});
