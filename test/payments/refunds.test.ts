import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  advance, createAccount, createPayment, expectError, getPayment, idempotencyKey, paymentEvents, referenceBody, waitFor,
} from './support/payments';
import { TimerModel } from '../../src/platform/timers/timerModel';
import type { ApiClient } from '../support/client';
import { sharedGateway, type TestServer } from '../support/server';

let server: TestServer;
beforeAll(async () => {
  server = await sharedGateway();
});
afterAll(async () => server?.stop());

async function paidPayment(api: ApiClient, amount = 10_000): Promise<any> {
  const pi = await createPayment(api, referenceBody(amount));
  const res = await api.post('/sandbox/simulate/reference_paid', { reference: pi.reference.number });
  expect(res.status).toBe(200);
  return res.body;
}

function refund(api: ApiClient, body: Record<string, unknown>, key = idempotencyKey()) {
  return api.post('/refunds', body, { idempotencyKey: key });
}

describe('refunds', () => {
  it('partial then full: PENDING, SUCCEEDED after ~3 s, intent PARTIALLY_REFUNDED then REFUNDED', async () => {
    const { api } = await createAccount(server.baseUrl);
    const pi = await paidPayment(api, 10_000);
    const r1 = await refund(api, { payment_intent: pi.id, amount: 4_000 });
    expect(r1.status).toBe(201);
    expect(Object.keys(r1.body)).toEqual(['id', 'object', 'payment_intent', 'amount', 'status', 'livemode', 'created_at', 'updated_at']);
    expect(r1.body).toMatchObject({ object: 'refund', payment_intent: pi.id, amount: 4_000, status: 'PENDING', livemode: false });
    expect(r1.body.id).toMatch(/^rf_[0-9A-Za-z]{24}$/);
    expect((await api.get(`/refunds/${r1.body.id}`)).body).toEqual(r1.body);
    expect((await getPayment(api, pi.id)).amount_refunded).toBe(0);

    // Its completion is scheduled for created_at + 3 s exactly (a value, not a measured delay).
    const [timer] = await TimerModel.find({ ref_id: r1.body.id }).lean();
    expect(timer!.due_at.getTime() - Date.parse(r1.body.created_at)).toBe(3_000);
    const clock = await advance(api, 3);
    const done = (await api.get(`/refunds/${r1.body.id}`)).body;
    expect(done.status).toBe('SUCCEEDED');
    // Stamped with that due time when the advance fired it; were the real-time poller first (3 s of real
    // time since the refund), with the account's clock then. Either way never early, and no later than
    // the clock the advance left (it returns once every timer due in its span has fired).
    expect(Date.parse(done.updated_at)).toBeGreaterThanOrEqual(timer!.due_at.getTime());
    expect(Date.parse(done.updated_at)).toBeLessThanOrEqual(Date.parse(clock.now));
    const partial = await getPayment(api, pi.id);
    expect(partial).toMatchObject({ status: 'PARTIALLY_REFUNDED', amount_refunded: 4_000, fee: 200, fee_version: 1 });

    const r2 = await refund(api, { payment_intent: pi.id }); // the whole remaining amount
    expect(r2.status).toBe(201);
    expect(r2.body.amount).toBe(6_000);
    await advance(api, 3);
    const refunded = await getPayment(api, pi.id);
    expect(refunded).toMatchObject({ status: 'REFUNDED', amount_refunded: 10_000, fee: 200 });

    const events = await paymentEvents(api, pi.id);
    expect(events.map((e) => e.type)).toEqual([
      'payment.created', 'reference.paid', 'payment.succeeded', 'refund.succeeded', 'refund.succeeded',
    ]);
    expect(events[3].data).toEqual(done);
    expect(events[4].data).toMatchObject({ id: r2.body.id, status: 'SUCCEEDED', amount: 6_000 });

    expectError(await refund(api, { payment_intent: pi.id, amount: 1 }), 409, 'payment_already_processed');
  });

  it('completes in real time after about 3 s', async () => {
    const { api } = await createAccount(server.baseUrl);
    const pi = await paidPayment(api, 5_000);
    const started = Date.now();
    const r = await refund(api, { payment_intent: pi.id, amount: 1_000 });
    const done = await waitFor(() => api.get(`/refunds/${r.body.id}`), (res) => res.body.status === 'SUCCEEDED', 15_000);
    // The real-time delay is the behaviour under test: a floor only ("not early"), which a loaded
    // machine cannot break; how late is measured in bench/ (timer lateness), not here.
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_900);
    expect(done.body.status).toBe('SUCCEEDED');
    expect((await getPayment(api, pi.id)).status).toBe('PARTIALLY_REFUNDED');
  });

  it('refuses refunds of unpaid intents (409), beyond what remains (400), unknown intents (404)', async () => {
    const a = await createAccount(server.baseUrl);
    const b = await createAccount(server.baseUrl);
    const pending = await createPayment(a.api, referenceBody(5_000));
    expectError(await refund(a.api, { payment_intent: pending.id }), 409, 'payment_already_processed');
    const pi = await paidPayment(a.api, 5_000);
    expectError(await refund(a.api, { payment_intent: pi.id, amount: 5_001 }), 400, 'amount_out_of_range');
    expect((await refund(a.api, { payment_intent: pi.id, amount: 3_000 })).status).toBe(201);
    expectError(await refund(a.api, { payment_intent: pi.id, amount: 2_001 }), 400, 'amount_out_of_range');
    expect((await refund(a.api, { payment_intent: pi.id })).body.amount).toBe(2_000);
    // Everything is reserved (refunds still PENDING): nothing left.
    expectError(await refund(a.api, { payment_intent: pi.id }), 400, 'amount_out_of_range');
    expectError(await refund(a.api, { payment_intent: pi.id, amount: 0 }), 400, 'invalid_request');
    expectError(await refund(b.api, { payment_intent: pi.id, amount: 1 }), 404, 'resource_not_found');
    expectError(await refund(a.api, { payment_intent: 'pay_000000000000000000000000' }), 404, 'resource_not_found');
    expectError(await a.api.get('/refunds/rf_000000000000000000000000'), 404, 'resource_not_found');
    const mine = await refund(a.api, { payment_intent: (await paidPayment(a.api, 1_000)).id, amount: 10 });
    expectError(await b.api.get(`/refunds/${mine.body.id}`), 404, 'resource_not_found');
  });

  it('20 concurrent partial refunds never refund more than the amount', async () => {
    const { api } = await createAccount(server.baseUrl);
    const pi = await paidPayment(api, 10_000);
    const results = await Promise.all(Array.from({ length: 20 }, () => refund(api, { payment_intent: pi.id, amount: 700 })));
    const created = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status !== 201);
    expect(created).toHaveLength(14); // 14 × 700 = 9 800 ≤ 10 000 < 15 × 700
    for (const r of refused) expect(r.body.error.code).toBe('amount_out_of_range');
    await advance(api, 5);
    const after = await getPayment(api, pi.id);
    const timers = await TimerModel.find({ ref_id: { $in: created.map((r) => r.body.id) } }).lean();
    const diag = JSON.stringify({ after, timers: timers.map((t) => [t.state, t.attempts, t.due_at, t.last_error?.slice(0, 300)]) });
    expect(after, diag).toMatchObject({ status: 'PARTIALLY_REFUNDED', amount_refunded: 9_800 });
    const events = await paymentEvents(api, pi.id);
    expect(events.filter((e) => e.type === 'refund.succeeded')).toHaveLength(14);
    const last = await refund(api, { payment_intent: pi.id });
    expect(last.body.amount).toBe(200);
  });

  it('is idempotent: same key and body replays, a different body is 409', async () => {
    const { api } = await createAccount(server.baseUrl);
    const pi = await paidPayment(api, 10_000);
    const key = idempotencyKey();
    const first = await refund(api, { payment_intent: pi.id, amount: 1_000 }, key);
    const replay = await refund(api, { amount: 1_000, payment_intent: pi.id }, key);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expectError(await refund(api, { payment_intent: pi.id, amount: 2_000 }, key), 409, 'idempotency_conflict');
    await advance(api, 3);
    expect((await getPayment(api, pi.id)).amount_refunded).toBe(1_000);
  });
});
