import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  accountEvents, createAccount, createPayment, expectError, expressBody, getPayment, idempotencyKey, referenceBody,
} from './support/payments';
import type { TestServer } from '../support/server';
import { sharedGateway } from '../support/server';

let server: TestServer;
beforeAll(async () => {
  server = await sharedGateway();
});
afterAll(async () => server?.stop());

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('POST /payment_intents', () => {
  it('creates an express intent in PENDING with exactly the contract fields and payment.created', async () => {
    const { api } = await createAccount(server.baseUrl);
    const body = expressBody('923000000', 15_000, { merchant_reference: 'order-1042', metadata: { order_id: '1042' } });
    const res = await api.post('/payment_intents', body, { idempotencyKey: idempotencyKey() });
    expect(res.status).toBe(201);
    expect(res.headers.get('idempotency-replayed')).toBeNull();
    const pi = res.body;
    expect(Object.keys(pi)).toEqual([
      'id', 'object', 'amount', 'currency', 'payment_method', 'status', 'failure_code', 'customer', 'merchant_reference',
      'reference', 'amount_refunded', 'fee', 'fee_version', 'api_key_id', 'metadata', 'livemode', 'created_at', 'updated_at',
    ]);
    expect(pi).toMatchObject({
      object: 'payment_intent', amount: 15_000, currency: 'AOA', payment_method: 'multicaixa_express', status: 'PENDING',
      failure_code: null, customer: { mobile: '923000000' }, merchant_reference: 'order-1042', reference: null,
      amount_refunded: 0, fee: null, fee_version: null, metadata: { order_id: '1042' }, livemode: false,
    });
    expect(pi.id).toMatch(/^pay_[0-9A-Za-z]{24}$/);
    expect(pi.api_key_id).toMatch(/^key_[0-9A-Za-z]{24}$/);
    expect(pi.created_at).toMatch(ISO_MS);
    expect(pi.updated_at).toBe(pi.created_at);

    const events = await accountEvents(api);
    expect(events.map((e) => e.type)).toEqual(['payment.created']);
    expect(events[0].data).toEqual(pi);
    expect(events[0].id).toMatch(/^evt_[0-9A-Za-z]{24}$/);
    expect(events[0].created_at).toBe(pi.created_at);
  });

  it('creates a reference intent with the account entity, a 9-digit number and expiry at +72 h', async () => {
    const { api } = await createAccount(server.baseUrl);
    const account = await api.get('/account');
    const pi = await createPayment(api, referenceBody(25_000));
    expect(pi.status).toBe('PENDING');
    expect(pi.customer).toBeNull();
    expect(pi.metadata).toEqual({});
    expect(pi.reference.entity).toBe(account.body.reference_entity);
    expect(pi.reference.number).toMatch(/^\d{9}$/);
    expect(Date.parse(pi.reference.expires_at) - Date.parse(pi.created_at)).toBe(72 * 3600 * 1000);
    const other = await createPayment(api, referenceBody(25_000));
    expect(other.reference.number).not.toBe(pi.reference.number);
  });

  it('requires a mobile for express: invalid_phone_number', async () => {
    const { api } = await createAccount(server.baseUrl);
    const missing = await api.post('/payment_intents', { amount: 1000, currency: 'AOA', payment_method: 'multicaixa_express' }, { idempotencyKey: idempotencyKey() });
    expectError(missing, 400, 'invalid_phone_number');
    const emptyCustomer = await api.post('/payment_intents', { amount: 1000, currency: 'AOA', payment_method: 'multicaixa_express', customer: {} }, { idempotencyKey: idempotencyKey() });
    expectError(emptyCustomer, 400, 'invalid_phone_number');
    for (const mobile of ['823000000', '92300000', '9230000000', 'abcdefghi']) {
      const res = await api.post('/payment_intents', expressBody(mobile), { idempotencyKey: idempotencyKey() });
      expectError(res, 400, 'invalid_phone_number');
    }
  });

  it('checks amounts against the method limits: amount_out_of_range', async () => {
    const { api } = await createAccount(server.baseUrl);
    const cases: Array<[Record<string, unknown>, number]> = [
      [expressBody('923000000', 99), 400],
      [expressBody('923000000', 5_000_001), 400],
      [referenceBody(99), 400],
      [referenceBody(50_000_001), 400],
      [expressBody('923000000', 100), 201],
      [expressBody('923000000', 5_000_000), 201],
      [referenceBody(50_000_000), 201],
    ];
    for (const [body, status] of cases) {
      const res = await api.post('/payment_intents', body, { idempotencyKey: idempotencyKey() });
      if (status === 400) expectError(res, 400, 'amount_out_of_range');
      else expect(res.status, JSON.stringify(body)).toBe(201);
    }
    const fractional = await api.post('/payment_intents', expressBody('923000000', 150.5), { idempotencyKey: idempotencyKey() });
    expectError(fractional, 400, 'invalid_request');
  });

  it('refuses coming-soon methods with method_disabled and unknown ones with invalid_request', async () => {
    const { api } = await createAccount(server.baseUrl);
    for (const code of ['card', 'unitel_money', 'afrimoney', 'paypay_africa', 'kwik']) {
      const res = await api.post('/payment_intents', { amount: 1000, currency: 'AOA', payment_method: code }, { idempotencyKey: idempotencyKey() });
      expectError(res, 400, 'method_disabled');
    }
    const unknown = await api.post('/payment_intents', { amount: 1000, currency: 'AOA', payment_method: 'bitcoin' }, { idempotencyKey: idempotencyKey() });
    expectError(unknown, 400, 'invalid_request');
  });

  it('validates currency, merchant_reference, metadata and unknown fields', async () => {
    const { api } = await createAccount(server.baseUrl);
    const bad: Array<Record<string, unknown>> = [
      expressBody('923000000', 1000, { currency: 'USD' }),
      expressBody('923000000', 1000, { merchant_reference: 'x'.repeat(65) }),
      expressBody('923000000', 1000, { metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) }),
      expressBody('923000000', 1000, { metadata: { ['k'.repeat(41)]: 'v' } }),
      expressBody('923000000', 1000, { metadata: { k: 'v'.repeat(501) } }),
      expressBody('923000000', 1000, { metadata: { k: 1 } }),
      expressBody('923000000', 1000, { colour: 'blue' }),
    ];
    for (const body of bad) {
      const res = await api.post('/payment_intents', body, { idempotencyKey: idempotencyKey() });
      expectError(res, 400, 'invalid_request');
    }
    const ok = await createPayment(api, expressBody('923000000', 1000, {
      merchant_reference: 'x'.repeat(64),
      metadata: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`${'k'.repeat(38)}${String(i).padStart(2, '0')}`, 'v'.repeat(500)])),
    }));
    expect(Object.keys(ok.metadata)).toHaveLength(50);
  });

  it('refuses metadata keys with $ or . and the keys the gateway reserves for its pages, naming the key', async () => {
    const { api } = await createAccount(server.baseUrl);
    const cases: Array<[Record<string, string>, string]> = [
      [{ $where: 'x' }, "key '$where' must not contain '$' or '.'"],
      [{ 'order.id': '1042' }, "key 'order.id' must not contain '$' or '.'"],
      [{ ok: 'y', 'a$b': 'x' }, "key 'a$b'"],
      [{ payment_link: 'plink_000000000000000000000000' }, "key 'payment_link' is reserved"],
      [{ checkout_session: 'cs_000000000000000000000000' }, "key 'checkout_session' is reserved"],
    ];
    for (const [metadata, message] of cases) {
      const res = await api.post('/payment_intents', expressBody('923000000', 1000, { metadata }), { idempotencyKey: idempotencyKey() });
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.message).toContain(message);
    }
    // Nothing was created, and keys that merely look alike are fine.
    expect((await api.get('/payment_intents')).body.data).toHaveLength(0);
    const metadata = { order_id: '1042', 'payment-link': 'mine', checkout_session_note: 'x', Payment_Link: 'y' };
    const pi = await createPayment(api, expressBody('923000000', 1000, { metadata }));
    expect(pi.metadata).toEqual(metadata);
  });

  it('requires an Idempotency-Key of 8 to 128 characters', async () => {
    const { api } = await createAccount(server.baseUrl);
    expectError(await api.post('/payment_intents', expressBody()), 400, 'invalid_request');
    expectError(await api.post('/payment_intents', expressBody(), { idempotencyKey: 'short' }), 400, 'invalid_request');
    expectError(await api.post('/payment_intents', expressBody(), { idempotencyKey: 'k'.repeat(129) }), 400, 'invalid_request');
  });
});

describe('GET /payment_intents and /payment_intents/{id}', () => {
  it('reads an intent, and answers 404 for an unknown one or another account\'s', async () => {
    const a = await createAccount(server.baseUrl);
    const b = await createAccount(server.baseUrl);
    const pi = await createPayment(a.api, referenceBody());
    expect(await getPayment(a.api, pi.id)).toEqual(pi);
    expectError(await b.api.get(`/payment_intents/${pi.id}`), 404, 'resource_not_found');
    expectError(await a.api.get('/payment_intents/pay_000000000000000000000000'), 404, 'resource_not_found');
    expectError(await b.api.post(`/payment_intents/${pi.id}/cancel`), 404, 'resource_not_found');
    const list = await b.api.get('/payment_intents');
    expect(list.body.data).toEqual([]);
  });

  it('lists newest first with limit, status and starting_after', async () => {
    const { api } = await createAccount(server.baseUrl);
    const created: any[] = [];
    for (let i = 0; i < 7; i++) created.push(await createPayment(api, referenceBody(1000 + i)));
    await api.post(`/payment_intents/${created[2].id}/cancel`);
    await api.post(`/payment_intents/${created[5].id}/cancel`);

    const all = await api.get('/payment_intents');
    expect(all.status).toBe(200);
    expect(all.body.object).toBe('list');
    expect(all.body.data.map((p: any) => p.id)).toEqual(created.map((p) => p.id).reverse());

    const page1 = await api.get('/payment_intents?limit=3');
    expect(page1.body.data.map((p: any) => p.amount)).toEqual([1006, 1005, 1004]);
    expect(page1.body.has_more).toBe(true);
    const page2 = await api.get(`/payment_intents?limit=3&starting_after=${page1.body.data[2].id}`);
    expect(page2.body.data.map((p: any) => p.amount)).toEqual([1003, 1002, 1001]);
    const page3 = await api.get(`/payment_intents?limit=3&starting_after=${page2.body.data[2].id}`);
    expect(page3.body.data.map((p: any) => p.amount)).toEqual([1000]);
    expect(page3.body.has_more).toBe(false);
    // A page that ends exactly at the oldest intent has nothing more.
    expect((await api.get(`/payment_intents?limit=1&starting_after=${page2.body.data[2].id}`)).body.has_more).toBe(false);

    const cancelled = await api.get('/payment_intents?status=CANCELLED');
    expect(cancelled.body.data.map((p: any) => p.id)).toEqual([created[5].id, created[2].id]);
    expect(cancelled.body.data.every((p: any) => p.status === 'CANCELLED')).toBe(true);

    expectError(await api.get('/payment_intents?limit=0'), 400, 'invalid_request');
    expectError(await api.get('/payment_intents?limit=501'), 400, 'invalid_request');
    expectError(await api.get('/payment_intents?status=PAID'), 400, 'invalid_request');
    expect((await api.get('/payment_intents?limit=500')).status).toBe(200);
  });
});

describe('POST /payment_intents/{id}/cancel', () => {
  it('cancels PENDING with payment.cancelled, then refuses with 409 and changes nothing', async () => {
    const { api } = await createAccount(server.baseUrl);
    const pi = await createPayment(api, referenceBody());
    const res = await api.post(`/payment_intents/${pi.id}/cancel`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('CANCELLED');
    expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(pi.updated_at));
    const again = await api.post(`/payment_intents/${pi.id}/cancel`);
    expectError(again, 409, 'payment_already_processed');
    expect(await getPayment(api, pi.id)).toEqual(res.body);
    const events = await accountEvents(api);
    expect(events.map((e) => e.type)).toEqual(['payment.created', 'payment.cancelled']);
    expect(events[1].data).toEqual(res.body);
  });

  it('cancels an express payment before the rail finishes, and the rail then leaves it alone', async () => {
    const { api } = await createAccount(server.baseUrl);
    const pi = await createPayment(api, expressBody('923000000'));
    const res = await api.post(`/payment_intents/${pi.id}/cancel`);
    expect(res.body.status).toBe('CANCELLED');
    await api.post('/sandbox/clock/advance', { seconds: 60 });
    expect((await getPayment(api, pi.id)).status).toBe('CANCELLED');
    expect((await accountEvents(api)).map((e) => e.type)).toEqual(['payment.created', 'payment.cancelled']);
  });
});
