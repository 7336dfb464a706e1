import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import type { TestServer } from '../support/server';
import { createLink, expectError, getRaw, PUBLIC_PAYMENT_FIELDS, startGatewayWithJobs } from './support/gateway';

/**
 * Payment links over real HTTP: creation rules (methods, limits), listing, reading, soft delete and
 * what it does to the public page and JSON, permissions, and payments made through a link.
 */
const PUBLIC_BASE = 'https://pay.example.test';
let server: TestServer;
beforeAll(async () => {
  // Listing needs more than 100 links from one key inside a minute.
  server = await startGatewayWithJobs({ PUBLIC_BASE_URL: PUBLIC_BASE, RATE_LIMIT_PER_MINUTE: '100000' });
});
afterAll(async () => server?.stop());

describe('POST /payment_links', () => {
  it('creates an active link with an 8-character code, the public url and all active methods', async () => {
    const { api } = await createAccount(server.baseUrl);
    const link = await createLink(api, { amount: 7500, description: 'Camisola oficial' });
    expect(link.id).toMatch(/^plink_[0-9A-Za-z]{24}$/);
    expect(link.code).toMatch(/^[0-9A-Za-z]{8}$/);
    expect(link.url).toBe(`${PUBLIC_BASE}/pay/${link.code}`);
    expect(link).toMatchObject({
      object: 'payment_link',
      amount: 7500,
      currency: 'AOA',
      methods: ['multicaixa_express', 'multicaixa_reference'],
      description: 'Camisola oficial',
      active: true,
      livemode: false,
    });
    expect(Number.isNaN(Date.parse(link.created_at))).toBe(false);
  });

  it('keeps only the methods asked for; description is optional', async () => {
    const { api } = await createAccount(server.baseUrl);
    const link = await createLink(api, { amount: 1000, methods: ['multicaixa_reference'] });
    expect(link.methods).toEqual(['multicaixa_reference']);
    expect(link.description).toBeNull();
  });

  it('every selected method must accept the amount (amount_out_of_range)', async () => {
    const { api } = await createAccount(server.baseUrl);
    expectError(await api.post('/payment_links', { amount: 99 }), 400, 'amount_out_of_range');
    // Above the express maximum (5 000 000) but inside the reference one (50 000 000).
    expectError(await api.post('/payment_links', { amount: 6_000_000 }), 400, 'amount_out_of_range');
    const refOnly = await createLink(api, { amount: 6_000_000, methods: ['multicaixa_reference'] });
    expect(refOnly.methods).toEqual(['multicaixa_reference']);
  });

  it('refuses coming-soon methods (method_disabled) and unknown ones (invalid_request)', async () => {
    const { api } = await createAccount(server.baseUrl);
    expectError(await api.post('/payment_links', { amount: 1000, methods: ['card'] }), 400, 'method_disabled');
    expectError(await api.post('/payment_links', { amount: 1000, methods: ['bitcoin'] }), 400, 'invalid_request');
    expectError(await api.post('/payment_links', { amount: 1000, description: 'x'.repeat(141) }), 400, 'invalid_request');
  });
});

describe('GET /payment_links', () => {
  it('lists the last 100 links, newest first', async () => {
    const { api } = await createAccount(server.baseUrl);
    const created: string[] = [];
    for (let i = 0; i < 102; i++) created.push((await createLink(api, { amount: 100 + i })).id);
    const res = await api.get('/payment_links');
    expect(res.status).toBe(200);
    expect(res.body.object).toBe('list');
    expect(res.body.data).toHaveLength(100);
    expect(res.body.data.map((l: any) => l.id)).toEqual(created.slice(2).reverse());
  });

  it('never shows another account\'s links', async () => {
    const a = await createAccount(server.baseUrl);
    const b = await createAccount(server.baseUrl);
    const link = await createLink(a.api, { amount: 500 });
    const list = await b.api.get('/payment_links');
    expect(list.body.data.map((l: any) => l.id)).not.toContain(link.id);
    expectError(await b.api.get(`/payment_links/${link.id}`), 404, 'resource_not_found');
    expectError(await b.api.delete(`/payment_links/${link.id}`), 404, 'resource_not_found');
  });
});

describe('DELETE /payment_links/{id}', () => {
  it('deactivates (soft delete): the link stays readable, the public JSON and page answer 410, earlier payments stay', async () => {
    const { api } = await createAccount(server.baseUrl);
    const link = await createLink(api, { amount: 2500, description: 'Bilhete' });
    const paid = await api.post(`/public/payment_links/${link.code}/payments`, { payment_method: 'multicaixa_reference' }, { key: null });
    expect(paid.status, paid.text).toBe(201);

    const del = await api.delete(`/payment_links/${link.id}`);
    expect(del.status, del.text).toBe(200);
    expect(del.body).toMatchObject({ id: link.id, active: false, code: link.code });
    const again = await api.delete(`/payment_links/${link.id}`);
    expect(again.status).toBe(200);
    expect(again.body.active).toBe(false);
    expect((await api.get(`/payment_links/${link.id}`)).body.active).toBe(false);

    expectError(await api.get(`/public/payment_links/${link.code}`, { key: null }), 410, 'payment_link_inactive');
    expectError(
      await api.post(`/public/payment_links/${link.code}/payments`, { payment_method: 'multicaixa_reference' }, { key: null }),
      410,
      'payment_link_inactive',
    );
    const page = await fetch(`${server.baseUrl}/pay/${link.code}`);
    expect(page.status).toBe(410);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).toContain('no longer active');

    const earlier = await api.get(`/payment_intents/${paid.body.id}`);
    expect(earlier.status).toBe(200);
    expect(earlier.body.metadata.payment_link).toBe(link.id);
  });
});

describe('permissions', () => {
  it('payment_links:read may read but not write; other permissions may do neither', async () => {
    const { api } = await createAccount(server.baseUrl);
    const link = await createLink(api, { amount: 700 });
    const reader = await api.post('/api_keys', { name: 'links reader', permissions: ['payment_links:read'] });
    const other = await api.post('/api_keys', { name: 'payments only', permissions: ['payment_intents:write'] });
    expect(reader.status, reader.text).toBe(201);
    const r = api.withKey(reader.body.secret);
    const o = api.withKey(other.body.secret);
    expect((await r.get('/payment_links')).status).toBe(200);
    expect((await r.get(`/payment_links/${link.id}`)).status).toBe(200);
    expect((await getRaw(server.baseUrl, `/payment_links/${link.id}/qr`, reader.body.secret)).status).toBe(200);
    expect((await getRaw(server.baseUrl, `/payment_links/${link.id}/qr`, other.body.secret)).status).toBe(403);
    expectError(await r.post('/payment_links', { amount: 700 }), 403, 'permission_denied');
    expectError(await r.delete(`/payment_links/${link.id}`), 403, 'permission_denied');
    expectError(await r.post('/qr_codes', { amount: 700 }), 403, 'permission_denied');
    expectError(await o.get('/payment_links'), 403, 'permission_denied');
    expectError(await api.get('/payment_links', { key: null }), 401, 'authentication_failed');
  });
});

describe('public link routes', () => {
  it('GET /public/payment_links/{code} shows the public view; unknown codes are 404', async () => {
    const { api } = await createAccount(server.baseUrl);
    const link = await createLink(api, { amount: 4200, description: 'Livro' });
    const res = await api.get(`/public/payment_links/${link.code}`, { key: null });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      object: 'payment_link',
      code: link.code,
      url: link.url,
      amount: 4200,
      currency: 'AOA',
      methods: link.methods,
      description: 'Livro',
      livemode: false,
    });
    expectError(await api.get('/public/payment_links/ZZZZZZZZ', { key: null }), 404, 'resource_not_found');
    expectError(await api.get('/public/payment_links/not-a-code', { key: null }), 404, 'resource_not_found');
  });

  it('a link payment is an intent for the link amount with metadata.payment_link and no key; the answer is the public view', async () => {
    const { api } = await createAccount(server.baseUrl);
    const link = await createLink(api, { amount: 3300 });
    const res = await api.post(
      `/public/payment_links/${link.code}/payments`,
      { payment_method: 'multicaixa_express', customer: { mobile: '923000000' } },
      { key: null },
    );
    expect(res.status, res.text).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(PUBLIC_PAYMENT_FIELDS);
    expect(res.body).toMatchObject({ object: 'payment_intent', amount: 3300, payment_method: 'multicaixa_express', status: 'PENDING' });

    const intent = (await api.get(`/payment_intents/${res.body.id}`)).body;
    expect(intent.metadata).toEqual({ payment_link: link.id });
    expect(intent.api_key_id).toBeNull();
    expect(intent.customer).toEqual({ mobile: '923000000' });
  });

  it('a reference payment returns the entity and the 9-digit number', async () => {
    const { api } = await createAccount(server.baseUrl);
    const link = await createLink(api, { amount: 12_000 });
    const res = await api.post(`/public/payment_links/${link.code}/payments`, { payment_method: 'multicaixa_reference' }, { key: null });
    expect(res.status, res.text).toBe(201);
    expect(res.body.reference.entity).toMatch(/^\d{5}$/);
    expect(res.body.reference.number).toMatch(/^\d{9}$/);
  });

  it('validation errors: bad or missing mobile, a method the link does not offer, a coming-soon method', async () => {
    const { api } = await createAccount(server.baseUrl);
    const link = await createLink(api, { amount: 900, methods: ['multicaixa_express'] });
    const pay = (body: unknown) => api.post(`/public/payment_links/${link.code}/payments`, body, { key: null });
    expectError(await pay({ payment_method: 'multicaixa_express', customer: { mobile: '12345' } }), 400, 'invalid_phone_number');
    expectError(await pay({ payment_method: 'multicaixa_express' }), 400, 'invalid_phone_number');
    expectError(await pay({ payment_method: 'multicaixa_reference' }), 400, 'invalid_request');
    expectError(await pay({ payment_method: 'unitel_money' }), 400, 'method_disabled');
    expectError(await pay({ payment_method: 'multicaixa_express', customer: { mobile: '923000000' }, amount: 1 }), 400, 'invalid_request');
  });
});

describe('GET /pay/{code}', () => {
  it('serves the page with a strict CSP, escaping what the merchant typed', async () => {
    const { api } = await createAccount(server.baseUrl);
    const evil = '<script>alert("x")</script><img src=x onerror=alert(1)>';
    const link = await createLink(api, { amount: 7500, description: evil });
    const res = await fetch(`${server.baseUrl}/pay/${link.code}`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    const html = await res.text();
    expect(html).toContain('7 500 AOA');
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('<img src=x');
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(html).toMatch(/<script src="\/pay-assets\/pay\.js" defer><\/script>/);
    expect(html).toContain('name="viewport"');
    expect((await fetch(`${server.baseUrl}/pay-assets/pay.js`)).headers.get('content-type')).toContain('javascript');
    expect((await fetch(`${server.baseUrl}/pay/ZZZZZZZZ`)).status).toBe(404);
  });
});
