import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createAccount } from '../support/accounts';
import { sharedGateway, type TestServer } from '../support/server';
import { waitFor } from '../support/wait';

let server: TestServer;
beforeAll(async () => {
  server = await sharedGateway();
});
afterAll(async () => server?.stop());

describe('GET /logs', () => {
  it("lists the account's requests newest first, with error codes and without secrets", async () => {
    const acct = await createAccount(server.baseUrl);
    await acct.api.get('/account');
    await acct.api.get('/nope');
    await acct.api.post('/api_keys', { name: 'bad', permissions: [], extra: 1 });
    // Polling GET /logs is itself logged: look at the other requests.
    const logs = (await waitFor(async () => {
      const res = await acct.api.get('/logs?limit=100');
      const others = res.body.data.filter((l: { path: string }) => l.path !== '/v1/logs');
      return others.length === 3 ? { ...res, others } : undefined;
    }, (v) => v !== undefined))!;
    expect(logs.status).toBe(200);
    const [newest, middle, oldest] = logs.others;
    expect(newest).toMatchObject({ method: 'POST', path: '/v1/api_keys', status: 400, error_code: 'invalid_request' });
    expect(middle).toMatchObject({ method: 'GET', path: '/v1/nope', status: 404, error_code: 'resource_not_found' });
    expect(oldest).toMatchObject({ method: 'GET', path: '/v1/account', status: 200, error_code: null });
    expect(newest.request_id).toMatch(/^req_/);
    expect(typeof newest.latency_ms).toBe('number');
    expect(JSON.stringify(logs.body)).not.toContain(acct.sk);
  });

  it('does not show another account its requests', async () => {
    const a = await createAccount(server.baseUrl);
    const b = await createAccount(server.baseUrl);
    const mine = await a.api.get('/account');
    const theirs = await b.api.get('/logs?limit=100');
    expect(theirs.body.data.map((l: { request_id: string }) => l.request_id)).not.toContain(mine.headers.get('request-id'));
  });

  it("lists only the calling key's requests, not the account's other keys' (REST and GraphQL)", async () => {
    const acct = await createAccount(server.baseUrl);
    const created = await acct.api.post('/api_keys', { name: 'reporting', permissions: ['logs:read'] });
    expect(created.status).toBe(201);
    const reporting = acct.api.withKey(created.body.secret);
    // One request with the full secret key, one with the restricted key, before either lists.
    const bySecretKey = await acct.api.get('/account');
    const byRestricted = await reporting.get('/logs?limit=100');
    const ids = (res: { body: { data: Array<{ request_id: string }> } }) => res.body.data.map((l) => l.request_id);

    // Listing flushes this process's queued entries first, so no polling is needed here.
    const restrictedView = await reporting.get('/logs?limit=100');
    expect(restrictedView.status).toBe(200);
    expect(ids(restrictedView)).toContain(byRestricted.headers.get('request-id'));
    expect(ids(restrictedView)).not.toContain(bySecretKey.headers.get('request-id'));
    expect(ids(restrictedView)).not.toContain(created.headers.get('request-id'));

    const secretView = await acct.api.get('/logs?limit=100');
    expect(ids(secretView)).toContain(bySecretKey.headers.get('request-id'));
    expect(ids(secretView)).not.toContain(byRestricted.headers.get('request-id'));

    // GraphQL's logs query goes through the same service.
    const res = await fetch(`${server.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${created.body.secret}` },
      body: JSON.stringify({ query: '{ logs(first: 100) { requestId } }' }),
    });
    const body = (await res.json()) as { data: { logs: Array<{ requestId: string }> }; errors?: unknown };
    expect(body.errors).toBeUndefined();
    const gqlIds = body.data.logs.map((l) => l.requestId);
    expect(gqlIds).toContain(byRestricted.headers.get('request-id'));
    expect(gqlIds).not.toContain(bySecretKey.headers.get('request-id'));
    expect(gqlIds).not.toContain(created.headers.get('request-id'));
  });

  it('rejects limits outside 1..100 instead of clamping them', async () => {
    const acct = await createAccount(server.baseUrl);
    for (const limit of ['0', '101', 'abc']) {
      const res = await acct.api.get(`/logs?limit=${limit}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect(res.body.error.message).toContain('limit');
    }
  });
});

describe('secrets at rest', () => {
  it('stores no raw key secret anywhere in the database', async () => {
    const acct = await createAccount(server.baseUrl);
    const restricted = await acct.api.post('/api_keys', { name: 'scan', permissions: ['logs:read'] });
    await acct.api.get('/account');
    await acct.api.withKey(restricted.body.secret).get('/logs');
    const secrets = [acct.sk, acct.pk, restricted.body.secret];
    // A connection of the test's own: a whole-store dump is inspection, not a query of the gateway's
    // (the query-shape recorder watches the gateway's connection only).
    const conn = await mongoose.createConnection(server.gateway.db.uri).asPromise();
    onTestFinished(() => conn.close());
    const db = conn.db!;
    const collections = await db.listCollections().toArray();
    expect(collections.length).toBeGreaterThan(2);
    for (const { name } of collections) {
      const docs = await db.collection(name).find({}).toArray();
      const dump = JSON.stringify(docs);
      for (const secret of secrets) {
        expect(dump.includes(secret), `collection ${name} holds a raw secret`).toBe(false);
        expect(dump.includes(secret.slice(8)), `collection ${name} holds a secret body`).toBe(false);
      }
    }
  });
});
