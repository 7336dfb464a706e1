import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckoutSessionModel } from '../../src/domain/checkout/checkoutSessionModel';
import { createAccount } from '../support/accounts';
import type { TestServer } from '../support/server';
import { accountEvents, createSession, expectError, getSession, paySession, PUBLIC_PAYMENT_FIELDS, startGatewayWithJobs, waitFor } from '../links/support/gateway';

/**
 * Checkout sessions over real HTTP: creation, the public JSON behind the page, completion when a payment
 * of the session succeeds (session, intent and events), expiry through the sandbox clock, permissions.
 */
const PUBLIC_BASE = 'https://pay.example.test';
let server: TestServer;
beforeAll(async () => {
  server = await startGatewayWithJobs({ PUBLIC_BASE_URL: PUBLIC_BASE });
});
afterAll(async () => server?.stop());

describe('POST /checkout/sessions', () => {
  it('creates an OPEN session valid 30 minutes, with its page url', async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, {
      amount: 32_000,
      merchant_reference: 'order-2001',
      success_url: 'https://shop.example/orders/2001/paid',
      cancel_url: 'https://shop.example/cart',
    });
    expect(s.id).toMatch(/^cs_[0-9A-Za-z]{24}$/);
    expect(s).toMatchObject({
      object: 'checkout_session',
      url: `${PUBLIC_BASE}/checkout/${s.id}`,
      amount: 32_000,
      currency: 'AOA',
      methods: ['multicaixa_express', 'multicaixa_reference'],
      status: 'OPEN',
      payment_intent: null,
      merchant_reference: 'order-2001',
      success_url: 'https://shop.example/orders/2001/paid',
      cancel_url: 'https://shop.example/cart',
      livemode: false,
    });
    expect(Date.parse(s.expires_at) - Date.parse(s.created_at)).toBe(30 * 60 * 1000);
    expect(await getSession(api, s.id)).toEqual(s);
  });

  it('validates methods and amounts like links, and takes only http(s) return URLs', async () => {
    const { api } = await createAccount(server.baseUrl);
    expectError(await api.post('/checkout/sessions', { amount: 10 }), 400, 'amount_out_of_range');
    expectError(await api.post('/checkout/sessions', { amount: 1000, methods: ['kwik'] }), 400, 'method_disabled');
    expectError(await api.post('/checkout/sessions', { amount: 1000, success_url: 'javascript:alert(1)' }), 400, 'invalid_request');
    expectError(await api.post('/checkout/sessions', { amount: 1000, merchant_reference: 'x'.repeat(65) }), 400, 'invalid_request');
    const s = await createSession(api, { amount: 1000, methods: ['multicaixa_express'] });
    expect(s).toMatchObject({ methods: ['multicaixa_express'], merchant_reference: null, success_url: null, cancel_url: null });
  });

  it('is private to the account and to keys with checkout_sessions permissions', async () => {
    const a = await createAccount(server.baseUrl);
    const b = await createAccount(server.baseUrl);
    const s = await createSession(a.api, { amount: 1000 });
    expectError(await b.api.get(`/checkout/sessions/${s.id}`), 404, 'resource_not_found');
    const reader = await a.api.post('/api_keys', { name: 'cs reader', permissions: ['checkout_sessions:read'] });
    const r = a.api.withKey(reader.body.secret);
    expect((await r.get(`/checkout/sessions/${s.id}`)).status).toBe(200);
    expectError(await r.post('/checkout/sessions', { amount: 1000 }), 403, 'permission_denied');
    const linksOnly = await a.api.post('/api_keys', { name: 'links', permissions: ['payment_links:write'] });
    expectError(await a.api.withKey(linksOnly.body.secret).get(`/checkout/sessions/${s.id}`), 403, 'permission_denied');
  });
});

describe('public checkout routes', () => {
  it('GET /public/checkout/sessions/{id} is the public view (no merchant reference); unknown ids are 404', async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, { amount: 5000, merchant_reference: 'secret-order-7', cancel_url: 'https://shop.example/cart' });
    const res = await api.get(`/public/checkout/sessions/${s.id}`, { key: null });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      id: s.id,
      object: 'checkout_session',
      url: s.url,
      amount: 5000,
      currency: 'AOA',
      methods: s.methods,
      status: 'OPEN',
      payment_intent: null,
      success_url: null,
      cancel_url: 'https://shop.example/cart',
      expires_at: s.expires_at,
      livemode: false,
    });
    expect(res.text).not.toContain('secret-order-7');
    expectError(await api.get('/public/checkout/sessions/cs_000000000000000000000000', { key: null }), 404, 'resource_not_found');
  });

  it('a reference payment completes the session: payment_intent, merchant_reference, metadata, checkout.session.completed', async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, { amount: 18_000, merchant_reference: 'order-77' });
    const paid = await paySession(api, s.id, { payment_method: 'multicaixa_reference' });
    expect(paid.status, paid.text).toBe(201);
    expect(Object.keys(paid.body).sort()).toEqual(PUBLIC_PAYMENT_FIELDS);
    expect(paid.body.reference.number).toMatch(/^\d{9}$/);

    const intent = (await api.get(`/payment_intents/${paid.body.id}`)).body;
    expect(intent).toMatchObject({ amount: 18_000, merchant_reference: 'order-77', api_key_id: null, metadata: { checkout_session: s.id } });
    expect((await getSession(api, s.id)).status).toBe('OPEN');

    const sim = await api.post('/sandbox/simulate/reference_paid', { reference: paid.body.reference.number });
    expect(sim.status, sim.text).toBe(200);

    const done = await waitFor(() => getSession(api, s.id), (x) => x.status === 'COMPLETED');
    expect(done.payment_intent).toBe(paid.body.id);

    const events = await waitFor(() => accountEvents(api), (evs) => evs.some((e) => e.type === 'checkout.session.completed'));
    const completed = events.filter((e) => e.type === 'checkout.session.completed');
    expect(completed).toHaveLength(1);
    expect(completed[0].data).toMatchObject({ id: s.id, object: 'checkout_session', status: 'COMPLETED', payment_intent: paid.body.id, merchant_reference: 'order-77' });
    // The payment's own events carry the session's merchant reference, and come first.
    const paymentEvents = events.filter((e) => e.type.startsWith('payment.') || e.type === 'reference.paid');
    expect(paymentEvents.map((e) => e.type)).toEqual(['payment.created', 'reference.paid', 'payment.succeeded']);
    for (const e of paymentEvents) expect(e.data.merchant_reference).toBe('order-77');
    expect(events.findIndex((e) => e.type === 'payment.succeeded')).toBeLessThan(events.findIndex((e) => e.type === 'checkout.session.completed'));

    // A completed session cannot be paid again, and its page says so.
    expectError(await paySession(api, s.id, { payment_method: 'multicaixa_reference' }), 409, 'payment_already_processed');
    const page = await fetch(`${server.baseUrl}/checkout/${s.id}`);
    expect(page.status).toBe(410);
    expect(await page.text()).toContain('already been paid');
    expect((await api.get(`/public/checkout/sessions/${s.id}`, { key: null })).body).toMatchObject({ status: 'COMPLETED', payment_intent: paid.body.id });
  });

  it('an express payment in real time completes the session; a failed one leaves it OPEN for another try', async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, { amount: 9000, merchant_reference: 'order-88' });
    const failed = await paySession(api, s.id, { payment_method: 'multicaixa_express', customer: { mobile: '923000001' } });
    expect(failed.status, failed.text).toBe(201);
    await waitFor(() => api.get(`/payment_intents/${failed.body.id}`).then((r) => r.body), (p) => p.status === 'FAILED');
    expect((await getSession(api, s.id)).status).toBe('OPEN');

    const ok = await paySession(api, s.id, { payment_method: 'multicaixa_express', customer: { mobile: '923000000' } });
    expect(ok.status, ok.text).toBe(201);
    const done = await waitFor(() => getSession(api, s.id), (x) => x.status === 'COMPLETED');
    expect(done.payment_intent).toBe(ok.body.id);
    const intent = (await api.get(`/payment_intents/${ok.body.id}`)).body;
    expect(intent).toMatchObject({ status: 'SUCCEEDED', merchant_reference: 'order-88', metadata: { checkout_session: s.id } });
  });

  it('validation errors reach the caller: bad mobile, a method the session does not offer', async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, { amount: 900, methods: ['multicaixa_express'] });
    expectError(await paySession(api, s.id, { payment_method: 'multicaixa_express', customer: { mobile: '823000000' } }), 400, 'invalid_phone_number');
    expectError(await paySession(api, s.id, { payment_method: 'multicaixa_reference' }), 400, 'invalid_request');
    expectError(await paySession(api, 'cs_000000000000000000000000', { payment_method: 'multicaixa_reference' }), 404, 'resource_not_found');
  });
});

describe('expiry', () => {
  it('an unpaid session expires when the sandbox clock passes 30 minutes, not before', async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, { amount: 1500, cancel_url: 'https://shop.example/cart' });
    expect((await api.post('/sandbox/clock/advance', { seconds: 1790 })).status).toBe(200);
    expect((await getSession(api, s.id)).status).toBe('OPEN');
    expect((await api.post('/sandbox/clock/advance', { seconds: 11 })).status).toBe(200);
    const expired = await getSession(api, s.id);
    expect(expired).toMatchObject({ status: 'EXPIRED', payment_intent: null });

    expectError(await paySession(api, s.id, { payment_method: 'multicaixa_reference' }), 409, 'payment_already_processed');
    const page = await fetch(`${server.baseUrl}/checkout/${s.id}`);
    expect(page.status).toBe(410);
    const html = await page.text();
    expect(html).toContain('expired');
    expect(html).toContain('href="https://shop.example/cart"');
    expect((await accountEvents(api)).some((e) => e.type === 'checkout.session.completed')).toBe(false);
  });

  it('advancing 1801 s expires it in one step (the durable timer fires during the advance)', async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, { amount: 1500 });
    expect((await api.post('/sandbox/clock/advance', { seconds: 1801 })).status).toBe(200);
    // Stored as EXPIRED by the timer itself, before anything reads the session.
    const stored = await CheckoutSessionModel.findById(s.id).lean();
    expect(stored?.status).toBe('EXPIRED');
    expect((await api.get(`/public/checkout/sessions/${s.id}`, { key: null })).body.status).toBe('EXPIRED');
  });

  it('a completed session never expires', async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, { amount: 2500 });
    const paid = await paySession(api, s.id, { payment_method: 'multicaixa_reference' });
    await api.post('/sandbox/simulate/reference_paid', { reference: paid.body.reference.number });
    await waitFor(() => getSession(api, s.id), (x) => x.status === 'COMPLETED');
    expect((await api.post('/sandbox/clock/advance', { seconds: 3600 })).status).toBe(200);
    expect(await getSession(api, s.id)).toMatchObject({ status: 'COMPLETED', payment_intent: paid.body.id });
  });
});

describe('GET /checkout/{id}', () => {
  it('serves an OPEN session page with the cancel link; unknown ids are a 404 page', async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, { amount: 32_000, cancel_url: 'https://shop.example/cart?a=1&b=2' });
    const res = await fetch(`${server.baseUrl}/checkout/${s.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await res.text();
    expect(html).toContain('32 000 AOA');
    expect(html).toContain('href="https://shop.example/cart?a=1&amp;b=2"');
    const missing = await fetch(`${server.baseUrl}/checkout/cs_000000000000000000000000`);
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain('not found');
  });
});
