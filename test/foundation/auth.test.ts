import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import { type TestServer } from '../support/server';
import { sharedGateway } from '../support/server';

let server: TestServer;
beforeAll(async () => {
  server = await sharedGateway();
});
afterAll(async () => server?.stop());

describe('authentication', () => {
  it('answers 401 authentication_failed without a key, with a bad key, and with a live key', async () => {
    const acct = await createAccount(server.baseUrl);
    for (const key of [null, 'sk_test_wrong', `sk_test_${'A'.repeat(32)}`, acct.sk.replace('sk_test_', 'sk_live_')]) {
      const res = await acct.api.get('/account', { key });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('authentication_failed');
    }
  });

  it('lets the publishable key read payment methods only', async () => {
    const acct = await createAccount(server.baseUrl);
    const pk = acct.api.withKey(acct.pk);
    expect((await pk.get('/payment_methods')).status).toBe(200);
    const denied = await pk.get('/account');
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('permission_denied');
    expect((await pk.get('/logs')).status).toBe(403);
  });
});

describe('API keys', () => {
  it('creates a restricted key whose secret is shown once and whose permissions are enforced', async () => {
    const acct = await createAccount(server.baseUrl);
    const created = await acct.api.post('/api_keys', { name: 'reporting', permissions: ['logs:read', 'account:write'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: 'api_key', type: 'restricted', name: 'reporting', revoked_at: null });
    expect(created.body.secret).toMatch(/^sk_test_[0-9A-Za-z]{32}$/);
    const restricted = acct.api.withKey(created.body.secret);

    expect((await restricted.get('/logs')).status).toBe(200);
    // write implies read
    expect((await restricted.get('/account')).status).toBe(200);
    const denied = await restricted.get('/payment_intents');
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('permission_denied');
    // only the full secret key manages keys
    expect((await restricted.get('/api_keys')).status).toBe(403);

    const list = await acct.api.get('/api_keys');
    expect(list.status).toBe(200);
    const listed = list.body.data.find((k: { id: string }) => k.id === created.body.id);
    expect(listed.last4).toBe(created.body.secret.slice(-4));
    expect(JSON.stringify(list.body)).not.toContain(created.body.secret);
    expect(list.body.data.map((k: { type: string }) => k.type).sort()).toEqual(['publishable', 'restricted', 'secret']);
  });

  it('rejects unknown permissions', async () => {
    const acct = await createAccount(server.baseUrl);
    const res = await acct.api.post('/api_keys', { name: 'x', permissions: ['everything:write'] });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message).toContain('permissions');
  });

  it('refuses a revoked key with 401', async () => {
    const acct = await createAccount(server.baseUrl);
    const created = await acct.api.post('/api_keys', { name: 'temp', permissions: ['account:read'] });
    const key = acct.api.withKey(created.body.secret);
    expect((await key.get('/account')).status).toBe(200);
    const revoked = await acct.api.delete(`/api_keys/${created.body.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked_at).not.toBeNull();
    const after = await key.get('/account');
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('authentication_failed');
  });

  it("answers 404 for another account's key", async () => {
    const a = await createAccount(server.baseUrl);
    const b = await createAccount(server.baseUrl);
    const created = await a.api.post('/api_keys', { name: 'mine', permissions: ['logs:read'] });
    const res = await b.api.delete(`/api_keys/${created.body.id}`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('resource_not_found');
    expect((await a.api.withKey(created.body.secret).get('/logs')).status).toBe(200);
  });
});
