import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import { ApiClient } from '../support/client';
import { type TestServer } from '../support/server';
import { sharedGateway } from '../support/server';

let server: TestServer;
let anon: ApiClient;

beforeAll(async () => {
  server = await sharedGateway();
  anon = new ApiClient(server.baseUrl);
});
afterAll(async () => server?.stop());

describe('POST /sandbox/accounts', () => {
  it('creates an account with a secret and a publishable key', async () => {
    const res = await anon.post('/sandbox/accounts', { name: 'Loja Kianda', email: 'dev@kianda.ao' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ object: 'sandbox_account', name: 'Loja Kianda', email: 'dev@kianda.ao', livemode: false });
    expect(res.body.id).toMatch(/^acct_[0-9A-Za-z]{24}$/);
    expect(res.body.sk).toMatch(/^sk_test_[0-9A-Za-z]{32}$/);
    expect(res.body.pk).toMatch(/^pk_test_[0-9A-Za-z]{32}$/);
    expect(res.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(res.headers.get('request-id')).toMatch(/^req_[0-9A-Za-z]{24}$/);
  });

  it('accepts an empty body', async () => {
    const res = await anon.request('POST', '/sandbox/accounts');
    expect(res.status).toBe(201);
    expect(res.body.email).toBeNull();
  });

  it('rejects unknown fields, naming the field', async () => {
    const res = await anon.post('/sandbox/accounts', { name: 'x', colour: 'blue' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message).toContain('colour');
    expect(res.body.error.request_id).toBe(res.headers.get('request-id'));
  });

  it('rejects a name over 80 characters and a malformed email', async () => {
    const long = await anon.post('/sandbox/accounts', { name: 'n'.repeat(81) });
    expect(long.status).toBe(400);
    expect(long.body.error.message).toContain('name');
    const email = await anon.post('/sandbox/accounts', { email: 'not-an-email' });
    expect(email.status).toBe(400);
    expect(email.body.error.message).toContain('email');
  });

  it('answers broken JSON with invalid_json', async () => {
    const res = await anon.request('POST', '/sandbox/accounts', { rawBody: '{"name": "x",', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_json');
  });

  it('refuses a body that is not declared as JSON', async () => {
    const res = await anon.request('POST', '/sandbox/accounts', { rawBody: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message).toContain('Content-Type');
  });

  it('answers a 65 KiB body with 413 payload_too_large', async () => {
    const res = await anon.request('POST', '/sandbox/accounts', {
      rawBody: JSON.stringify({ name: 'x'.repeat(65 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
  });

  it('refuses __proto__ and constructor keys, also nested and spelled with \\u escapes', async () => {
    for (const rawBody of [
      '{"__proto__": {"admin": true}}',
      '{"name": "x", "metadata": {"constructor": {"prototype": 1}}}',
      '{"name": "x", "\\u005f_proto__": {"admin": true}}',
      '{"name": "x", "\\u0063onstructor": 1}',
    ]) {
      const res = await anon.request('POST', '/sandbox/accounts', { rawBody, headers: { 'content-type': 'application/json' } });
      expect(res.status, rawBody).toBe(400);
      expect(res.body.error.code, rawBody).toBe('invalid_request');
    }
  });

  it('refuses a body nested deeper than 64 levels with invalid_request, however deep', async () => {
    for (const depth of [65, 30_000]) {
      const rawBody = `{"name": "x", "metadata": ${'['.repeat(depth)}${']'.repeat(depth)}}`;
      const res = await anon.request('POST', '/sandbox/accounts', { rawBody, headers: { 'content-type': 'application/json' } });
      expect(res.status, String(depth)).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    const brackets = await anon.request('POST', '/sandbox/accounts', { rawBody: `{"name": "${'[{'.repeat(100)}"}`, headers: { 'content-type': 'application/json' } });
    // Brackets inside a string are text, not nesting (the name is refused for its length only).
    expect(brackets.body.error?.message ?? '').not.toContain('nested');
  });

  it('answers 404 to a path with a doubled slash, which names no operation', async () => {
    for (const path of ['/v1/sandbox/accounts//', '/v1//sandbox/accounts', '/v1/payment_methods//']) {
      const res = await anon.request('POST', path, { rawBody: '{"name": "x"}', headers: { 'content-type': 'application/json' } });
      expect(res.status, path).toBe(404);
      expect(res.body.error.code).toBe('resource_not_found');
    }
  });

  it('accepts those words as values, and a body sent in chunks without Content-Length', async () => {
    const named = await anon.request('POST', '/sandbox/accounts', { rawBody: '{"name": "constructor __proto__ \\u00e9"}', headers: { 'content-type': 'application/json' } });
    expect(named.status).toBe(201);
    expect(named.body.name).toBe('constructor __proto__ é');
    const body = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode('{"name": "Lo'));
        c.enqueue(new TextEncoder().encode('ja"}'));
        c.close();
      },
    });
    const chunked = await fetch(`${server.baseUrl}/v1/sandbox/accounts`, { method: 'POST', body, headers: { 'content-type': 'application/json' }, duplex: 'half' } as RequestInit);
    expect(chunked.status).toBe(201);
    expect((await chunked.json()).name).toBe('Loja');
  });
});

describe('GET /account', () => {
  it('returns the account of the key', async () => {
    const acct = await createAccount(server.baseUrl, 'Mercado Roque');
    const res = await acct.api.get('/account');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'account', id: acct.id, name: 'Mercado Roque', livemode: false });
    expect(res.body.reference_entity).toMatch(/^[1-9]\d{4}$/);
    expect(JSON.stringify(res.body)).not.toContain(acct.sk);
  });
});

describe('GET /payment_methods', () => {
  it('lists active and coming-soon methods with their limits', async () => {
    const acct = await createAccount(server.baseUrl);
    const res = await acct.api.get('/payment_methods');
    expect(res.status).toBe(200);
    expect(res.body.object).toBe('list');
    const byCode = Object.fromEntries(res.body.data.map((m: { code: string }) => [m.code, m]));
    expect(byCode.multicaixa_express).toMatchObject({ status: 'active', min_amount: 100, max_amount: 5_000_000, channels: { api: true, checkout: true, link: true } });
    expect(byCode.multicaixa_reference).toMatchObject({ status: 'active', min_amount: 100, max_amount: 50_000_000 });
    for (const code of ['card', 'unitel_money', 'afrimoney', 'paypay_africa', 'kwik']) {
      expect(byCode[code]).toMatchObject({ status: 'coming_soon', min_amount: null, max_amount: null, channels: { api: false, checkout: false, link: false } });
    }
  });
});

describe('unknown routes', () => {
  it('answers 404 resource_not_found for an unknown path and for a wrong method', async () => {
    const acct = await createAccount(server.baseUrl);
    const unknown = await acct.api.get('/no_such_thing');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('resource_not_found');
    const wrongMethod = await acct.api.request('PUT', '/account');
    expect(wrongMethod.status).toBe(404);
    expect(wrongMethod.body.error.code).toBe('resource_not_found');
  });
});
