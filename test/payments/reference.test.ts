import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  accountEvents, advance, createAccount, createPayment, expectError, getPayment, paymentEvents, referenceBody,
} from './support/payments';
import { sharedGateway, type TestServer } from '../support/server';

let server: TestServer;
beforeAll(async () => {
  server = await sharedGateway();
});
afterAll(async () => server?.stop());

describe('POST /sandbox/simulate/reference_paid', () => {
  it('pays a PENDING reference: 200 SUCCEEDED, reference.paid then payment.succeeded', async () => {
    const { api } = await createAccount(server.baseUrl);
    const pi = await createPayment(api, referenceBody(25_000, { merchant_reference: 'order-1043' }));
    const res = await api.post('/sandbox/simulate/reference_paid', { reference: pi.reference.number });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: pi.id, status: 'SUCCEEDED', fee: 500, fee_version: 1, reference: pi.reference });
    expect(await getPayment(api, pi.id)).toEqual(res.body);
    const events = await paymentEvents(api, pi.id);
    expect(events.map((e) => e.type)).toEqual(['payment.created', 'reference.paid', 'payment.succeeded']);
    expect(events[1].data).toEqual(res.body);
    expect(events[2].data).toEqual(res.body);
    expect(events[2].data.merchant_reference).toBe('order-1043');
  });

  it('answers 404 for an unknown reference or another account\'s, 400 for a malformed one', async () => {
    const a = await createAccount(server.baseUrl);
    const b = await createAccount(server.baseUrl);
    const pi = await createPayment(a.api, referenceBody());
    expectError(await b.api.post('/sandbox/simulate/reference_paid', { reference: pi.reference.number }), 404, 'resource_not_found');
    const unknown = pi.reference.number === '100000000' ? '100000001' : '100000000';
    expectError(await a.api.post('/sandbox/simulate/reference_paid', { reference: unknown }), 404, 'resource_not_found');
    expectError(await a.api.post('/sandbox/simulate/reference_paid', { reference: '12345' }), 400, 'invalid_request');
    expect((await getPayment(a.api, pi.id)).status).toBe('PENDING');
  });

  it('answers 409 when the intent is not PENDING (paid, cancelled) and changes nothing', async () => {
    const { api } = await createAccount(server.baseUrl);
    const paid = await createPayment(api, referenceBody());
    await api.post('/sandbox/simulate/reference_paid', { reference: paid.reference.number });
    const before = await getPayment(api, paid.id);
    expectError(await api.post('/sandbox/simulate/reference_paid', { reference: paid.reference.number }), 409, 'payment_already_processed');
    expect(await getPayment(api, paid.id)).toEqual(before);

    const cancelled = await createPayment(api, referenceBody());
    await api.post(`/payment_intents/${cancelled.id}/cancel`);
    expectError(await api.post('/sandbox/simulate/reference_paid', { reference: cancelled.reference.number }), 409, 'payment_already_processed');
    expect((await getPayment(api, cancelled.id)).status).toBe('CANCELLED');
    const types = (await accountEvents(api)).map((e) => e.type);
    expect(types.filter((t) => t === 'payment.succeeded')).toHaveLength(1);
  });

  it('10 concurrent calls: one 200, the rest 409, exactly one payment.succeeded', async () => {
    const { api } = await createAccount(server.baseUrl);
    const pi = await createPayment(api, referenceBody());
    const results = await Promise.all(
      Array.from({ length: 10 }, () => api.post('/sandbox/simulate/reference_paid', { reference: pi.reference.number })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
    const events = await paymentEvents(api, pi.id);
    expect(events.filter((e) => e.type === 'payment.succeeded')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'reference.paid')).toHaveLength(1);
  });
});

describe('reference expiry', () => {
  it('expires an unpaid reference at +72 h with payment.expired; paying it afterwards is 409', async () => {
    const { api } = await createAccount(server.baseUrl);
    const pi = await createPayment(api, referenceBody());
    const paidLater = await createPayment(api, referenceBody());
    await advance(api, 72 * 3600 - 10);
    expect((await getPayment(api, pi.id)).status).toBe('PENDING');
    await api.post('/sandbox/simulate/reference_paid', { reference: paidLater.reference.number });
    const clock = await advance(api, 20);
    const expired = await getPayment(api, pi.id);
    expect(expired.status).toBe('EXPIRED');
    // Stamped with the expiry itself when the advance fired it (the timer's due time); were the real-time
    // poller first (10 s of real time between the two advances), with the account's clock then. Either
    // way never before the expiry, and no later than the clock the advance left, which returns once
    // every timer due in its span has fired. An order, not a bound on how late.
    expect(Date.parse(expired.updated_at)).toBeGreaterThanOrEqual(Date.parse(pi.reference.expires_at));
    expect(Date.parse(expired.updated_at)).toBeLessThanOrEqual(Date.parse(clock.now));
    expect((await getPayment(api, paidLater.id)).status).toBe('SUCCEEDED');
    const events = await paymentEvents(api, pi.id);
    expect(events.map((e) => e.type)).toEqual(['payment.created', 'payment.expired']);
    expect(events[1].data).toEqual(expired);
    expectError(await api.post('/sandbox/simulate/reference_paid', { reference: pi.reference.number }), 409, 'payment_already_processed');
    expectError(await api.post(`/payment_intents/${pi.id}/cancel`), 409, 'payment_already_processed');
  });
});

describe('reference numbers', () => {
  it('belong to one intent for ever: the index refuses a second holder, and the error is recognised as a number clash', async () => {
    const { PaymentModel } = await import('../../src/domain/payments/paymentModel');
    const { isReferenceNumberConflict } = await import('../../src/domain/payments/reference');
    const { api } = await createAccount(server.baseUrl);
    const pi = await createPayment(api, referenceBody(3_000));
    const stored = await PaymentModel.collection.findOne({ _id: pi.id as never });
    const copy = { ...stored!, _id: `${pi.id}_copy` };
    const err = await PaymentModel.collection.insertOne(copy as never).then(() => null, (e: unknown) => e);
    expect((err as { code?: number }).code).toBe(11000);
    expect(isReferenceNumberConflict(err)).toBe(true);
    // An express intent has no number and never clashes.
    const express = await createPayment(api, { amount: 1000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000000' } });
    expect(express.reference).toBeNull();
  });
});
