import mongoose from 'mongoose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmbeddedMongo, type EmbeddedMongo } from '@pgw/embedded-mongo';
import { createAccount } from '../support/accounts';
import { spawnGateway, type GatewayProcess } from '../support/processes';
import { startTestServer, type TestServer } from '../support/server';

/**
 * A key's rate-limit window and its account's both live in the account's document, so that one
 * findAndModify counts a request in both and reads the account's clock for its handler. The answers
 * must be those of counting each request on its own, in the database: shared by every gateway process,
 * with each of a turn's concurrent requests at its own place in the window.
 */
let engine: EmbeddedMongo;
let a: TestServer;
let b: GatewayProcess;
const KEY_LIMIT = 500;
const ACCOUNT_LIMIT = 1_000;
const limits = { RATE_LIMIT_PER_MINUTE: String(KEY_LIMIT), RATE_LIMIT_PER_ACCOUNT_PER_MINUTE: String(ACCOUNT_LIMIT) };

beforeAll(async () => {
  engine = await startEmbeddedMongo({ port: 0 });
  a = await startTestServer({ MONGODB_URI: engine.uri, ...limits });
  b = await spawnGateway(engine.uri, limits);
});
afterAll(async () => {
  await b?.stop();
  await a?.stop();
  await engine?.close();
});

interface StoredAccount {
  rate_count: number;
  key_rates: Record<string, { count: number }>;
}
const storedAccount = async (id: string) => (await mongoose.connection.collection('accounts').findOne({ _id: id as never })) as unknown as StoredAccount;

it('requests of one key alternating between two gateway processes count down one window, in the account document', async () => {
  const acct = await createAccount(a.baseUrl);
  const remaining: string[] = [];
  for (let i = 0; i < 6; i++) {
    const base = i % 2 === 0 ? a.baseUrl : b.url;
    const res = await fetch(`${base}/v1/payment_methods`, { headers: { authorization: `Bearer ${acct.sk}` } });
    expect(res.status).toBe(200);
    remaining.push(res.headers.get('x-ratelimit-remaining')!);
  }
  expect(remaining).toEqual(['499', '498', '497', '496', '495', '494']);
  const stored = await storedAccount(acct.id);
  expect(stored.rate_count).toBe(6);
  expect(Object.values(stored.key_rates).map((w) => w.count)).toEqual([6]);
});

it('forty concurrent requests of one key each take their own place in the window; a second key counts in the account only', async () => {
  const acct = await createAccount(a.baseUrl);
  const key = async () => (await fetch(`${a.baseUrl}/v1/account`, { headers: { authorization: `Bearer ${acct.sk}` } })).headers;
  const headers = await Promise.all(Array.from({ length: 40 }, key));
  const remaining = headers.map((h) => Number(h.get('x-ratelimit-remaining'))).sort((x, y) => y - x);
  expect(remaining).toEqual(Array.from({ length: 40 }, (_, i) => KEY_LIMIT - 1 - i));

  const other = await fetch(`${a.baseUrl}/v1/account`, { headers: { authorization: `Bearer ${acct.pk}` } });
  expect(other.headers.get('x-ratelimit-remaining')).toBe(String(KEY_LIMIT - 1));
  const stored = await storedAccount(acct.id);
  expect(stored.rate_count).toBe(41);
  expect(Object.values(stored.key_rates).map((w) => w.count).sort((x, y) => x - y)).toEqual([1, 40]);
});

it("a revoked key's window leaves the account document, and the key is refused with 401", async () => {
  const acct = await createAccount(a.baseUrl);
  const created = await acct.api.post('/api_keys', { name: 'temp', permissions: ['account:read'] });
  expect(created.status, created.text).toBe(201);
  const restricted = acct.api.withKey(created.body.secret);
  expect((await restricted.get('/account')).status).toBe(200);
  expect(Object.keys((await storedAccount(acct.id)).key_rates)).toContain(created.body.id);

  expect((await acct.api.delete(`/api_keys/${created.body.id}`)).status).toBe(200);
  expect(Object.keys((await storedAccount(acct.id)).key_rates)).not.toContain(created.body.id);
  expect((await restricted.get('/account')).status).toBe(401);
});

it('a key both processes remember is refused by both from the moment it is revoked in either', async () => {
  const acct = await createAccount(a.baseUrl);
  const created = await acct.api.post('/api_keys', { name: 'remembered', permissions: ['account:read'] });
  expect(created.status, created.text).toBe(201);
  const get = (base: string) => fetch(`${base}/v1/account`, { headers: { authorization: `Bearer ${created.body.secret}` } });
  // Both processes have read the key and now only count it.
  for (const base of [a.baseUrl, b.url, a.baseUrl, b.url]) expect((await get(base)).status).toBe(200);

  const revoked = await fetch(`${b.url}/v1/api_keys/${created.body.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${acct.sk}` } });
  expect(revoked.status).toBe(200);
  for (const base of [a.baseUrl, b.url]) {
    const res = await get(base);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('authentication_failed');
  }
  const stored = (await mongoose.connection.collection('accounts').findOne({ _id: acct.id as never })) as unknown as { revoked_keys: Record<string, Date> };
  expect(stored.revoked_keys[created.body.id]).toBeInstanceOf(Date);
});

it("the account's revocation mark alone refuses a key, remembered or not (a crash before the key's own revoked_at)", async () => {
  const acct = await createAccount(a.baseUrl);
  const remembered = await acct.api.post('/api_keys', { name: 'remembered', permissions: ['account:read'] });
  const unseen = await acct.api.post('/api_keys', { name: 'unseen', permissions: ['account:read'] });
  const get = (base: string, secret: string) => fetch(`${base}/v1/account`, { headers: { authorization: `Bearer ${secret}` } });
  for (const base of [a.baseUrl, b.url]) expect((await get(base, remembered.body.secret)).status).toBe(200);

  // The first of a revocation's two writes, and not the second.
  await mongoose.connection
    .collection('accounts')
    .updateOne({ _id: acct.id as never }, { $set: { [`revoked_keys.${remembered.body.id}`]: new Date(), [`revoked_keys.${unseen.body.id}`]: new Date() } });
  for (const base of [a.baseUrl, b.url]) {
    expect((await get(base, remembered.body.secret)).status).toBe(401);
    expect((await get(base, unseen.body.secret)).status).toBe(401);
  }
  // Revoking completes it: the key's own revoked_at, and the list shows it revoked.
  const revoked = await acct.api.delete(`/api_keys/${remembered.body.id}`);
  expect(revoked.status).toBe(200);
  expect(revoked.body.revoked_at).not.toBeNull();
  expect((await get(a.baseUrl, acct.sk)).status).toBe(200);
});
