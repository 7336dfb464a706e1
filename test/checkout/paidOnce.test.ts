import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckoutSessionModel } from '../../src/domain/checkout/checkoutSessionModel';
import { PaymentModel } from '../../src/domain/payments/paymentModel';
import { createAccount } from '../support/accounts';
import type { ApiClient, ApiResponse } from '../support/client';
import type { TestServer } from '../support/server';
import { accountEvents, advanceClock, createSession, expectError, getSession, paySession, waitFor } from '../links/support/gateway';
import { sharedGateway } from '../support/server';

/**
 * A checkout session is paid at most once (issue 16): one payment in flight per session, claimed by a
 * conditional update on the session; concurrent attempts are 409 `payment_already_processed`; the claim
 * is given back when its payment fails, is cancelled or expires, so the customer can try again.
 */
let server: TestServer;
beforeAll(async () => {
  server = await sharedGateway();
});
afterAll(async () => server?.stop());

const RACERS = 20;

/** RACERS page payments on one session at once; returns the accepted one and checks the others. */
async function race(api: ApiClient, sessionId: string, body: unknown): Promise<ApiResponse> {
  const answers = await Promise.all(Array.from({ length: RACERS }, () => paySession(api, sessionId, body)));
  const accepted = answers.filter((r) => r.status === 201);
  expect(accepted.map((r) => r.body.id), answers.map((r) => `${r.status} ${r.text}`).join('\n')).toHaveLength(1);
  for (const r of answers.filter((x) => x.status !== 201)) expectError(r, 409, 'payment_already_processed');
  return accepted[0]!;
}

/** Every payment of the account made through this session. */
async function sessionPayments(api: ApiClient, sessionId: string): Promise<any[]> {
  const res = await api.get('/payment_intents?limit=500');
  expect(res.status, res.text).toBe(200);
  return res.body.data.filter((p: any) => p.metadata?.checkout_session === sessionId);
}

const storedClaim = async (id: string) =>
  (await CheckoutSessionModel.findById(id, { active_payment_id: 1 }).lean())?.active_payment_id ?? null;

describe('concurrent payments on one checkout session', () => {
  it(`express: of ${RACERS} concurrent attempts one payment is created, the others 409; it completes the session, which stays COMPLETED`, async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, { amount: 9000, merchant_reference: 'order-race-1' });
    const winner = await race(api, s.id, { payment_method: 'multicaixa_express', customer: { mobile: '923000000' } });
    expect(await storedClaim(s.id)).toBe(winner.body.id);
    expect((await sessionPayments(api, s.id)).map((p) => p.id)).toEqual([winner.body.id]);

    await advanceClock(api, 5);
    expect(await getSession(api, s.id)).toMatchObject({ status: 'COMPLETED', payment_intent: winner.body.id });

    // Paid once: nothing more can be started on it, now or later.
    const again = await Promise.all(
      Array.from({ length: 5 }, () => paySession(api, s.id, { payment_method: 'multicaixa_express', customer: { mobile: '923000000' } })),
    );
    for (const r of again) expectError(r, 409, 'payment_already_processed');
    await advanceClock(api, 3600);
    expect(await getSession(api, s.id)).toMatchObject({ status: 'COMPLETED', payment_intent: winner.body.id });
    const payments = await sessionPayments(api, s.id);
    expect(payments.map((p) => [p.id, p.status])).toEqual([[winner.body.id, 'SUCCEEDED']]);
  });

  it(`reference: of ${RACERS} concurrent attempts one reference is issued; paying it completes the session`, async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, { amount: 18_000 });
    const winner = await race(api, s.id, { payment_method: 'multicaixa_reference' });
    expect(winner.body.reference.number).toMatch(/^\d{9}$/);
    expect(await sessionPayments(api, s.id)).toHaveLength(1);

    const sim = await api.post('/sandbox/simulate/reference_paid', { reference: winner.body.reference.number });
    expect(sim.status, sim.text).toBe(200);
    const done = await waitFor(() => getSession(api, s.id), (x) => x.status === 'COMPLETED');
    expect(done.payment_intent).toBe(winner.body.id);
    expectError(await paySession(api, s.id, { payment_method: 'multicaixa_reference' }), 409, 'payment_already_processed');
    expect(await sessionPayments(api, s.id)).toHaveLength(1);
  });

  it('mixed methods racing: still one payment', async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, { amount: 5000 });
    const bodies = Array.from({ length: RACERS }, (_, i) =>
      i % 2 === 0 ? { payment_method: 'multicaixa_reference' } : { payment_method: 'multicaixa_express', customer: { mobile: '923000000' } },
    );
    const answers = await Promise.all(bodies.map((b) => paySession(api, s.id, b)));
    expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of answers.filter((x) => x.status !== 201)) expectError(r, 409, 'payment_already_processed');
    expect(await sessionPayments(api, s.id)).toHaveLength(1);
  });
});

describe('the claim is given back when its payment cannot succeed any more', () => {
  it('a failed express payment (923000001) frees the session: a new race is won by one, which completes it', async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, { amount: 9000 });
    const first = await race(api, s.id, { payment_method: 'multicaixa_express', customer: { mobile: '923000001' } });
    // In flight: still claimed, so another attempt is refused.
    expectError(await paySession(api, s.id, { payment_method: 'multicaixa_reference' }), 409, 'payment_already_processed');

    await advanceClock(api, 5);
    expect((await api.get(`/payment_intents/${first.body.id}`)).body.status).toBe('FAILED');
    // Released by the payment.failed hook itself (the advance waits for hooks), not by a later attempt.
    expect(await storedClaim(s.id)).toBeNull();
    expect((await getSession(api, s.id)).status).toBe('OPEN');

    const second = await race(api, s.id, { payment_method: 'multicaixa_express', customer: { mobile: '923000000' } });
    expect(second.body.id).not.toBe(first.body.id);
    await advanceClock(api, 5);
    expect(await getSession(api, s.id)).toMatchObject({ status: 'COMPLETED', payment_intent: second.body.id });
    const payments = await sessionPayments(api, s.id);
    expect(payments.map((p) => [p.id, p.status]).sort()).toEqual(
      [
        [first.body.id, 'FAILED'],
        [second.body.id, 'SUCCEEDED'],
      ].sort(),
    );
  });

  it('provider_unavailable (923000004) and a cancelled reference free it too', async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, { amount: 7000 });

    const unavailable = await paySession(api, s.id, { payment_method: 'multicaixa_express', customer: { mobile: '923000004' } });
    expect(unavailable.status, unavailable.text).toBe(201);
    await advanceClock(api, 2);
    expect((await api.get(`/payment_intents/${unavailable.body.id}`)).body.status).toBe('FAILED');
    expect(await storedClaim(s.id)).toBeNull();

    const cancelled = await paySession(api, s.id, { payment_method: 'multicaixa_reference' });
    expect(cancelled.status, cancelled.text).toBe(201);
    expectError(await paySession(api, s.id, { payment_method: 'multicaixa_reference' }), 409, 'payment_already_processed');
    expect((await api.post(`/payment_intents/${cancelled.body.id}/cancel`)).status).toBe(200);
    await waitFor(() => storedClaim(s.id), (claim) => claim === null);

    const next = await paySession(api, s.id, { payment_method: 'multicaixa_reference' });
    expect(next.status, next.text).toBe(201);
    expect(await storedClaim(s.id)).toBe(next.body.id);
  });

  it('an expired reference frees it (the payment ends at +72 h)', async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, { amount: 7000 });
    const paid = await paySession(api, s.id, { payment_method: 'multicaixa_reference' });
    expect(paid.status, paid.text).toBe(201);
    expect(await storedClaim(s.id)).toBe(paid.body.id);
    await advanceClock(api, 72 * 3600 + 1);
    expect((await api.get(`/payment_intents/${paid.body.id}`)).body.status).toBe('EXPIRED');
    expect(await storedClaim(s.id)).toBeNull();
  });

  it('a payment that ended before its release hook ran does not block the next attempt', async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, { amount: 7000 });
    const first = await paySession(api, s.id, { payment_method: 'multicaixa_reference' });
    expect(first.status, first.text).toBe(201);
    expect((await api.post(`/payment_intents/${first.body.id}/cancel`)).status).toBe(200);
    // As if the hook had not run yet (its process died; the sweeper would run it later): the claim is
    // still the cancelled payment's.
    await CheckoutSessionModel.updateOne({ _id: s.id }, { $set: { active_payment_id: first.body.id } });
    const next = await paySession(api, s.id, { payment_method: 'multicaixa_reference' });
    expect(next.status, next.text).toBe(201);
    expect(await storedClaim(s.id)).toBe(next.body.id);
  });

  it('a validation error never holds the session', async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, { amount: 900, methods: ['multicaixa_express'] });
    expectError(await paySession(api, s.id, { payment_method: 'multicaixa_express', customer: { mobile: '823000000' } }), 400, 'invalid_phone_number');
    expectError(await paySession(api, s.id, { payment_method: 'multicaixa_reference' }), 400, 'invalid_request');
    expect(await storedClaim(s.id)).toBeNull();
    const ok = await paySession(api, s.id, { payment_method: 'multicaixa_express', customer: { mobile: '923000000' } });
    expect(ok.status, ok.text).toBe(201);
  });
});

describe('sessions stored before claims existed', () => {
  it('have no claim fields; a missing field reads as unclaimed, and the race still has one winner', async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, { amount: 3000 });
    await CheckoutSessionModel.collection.updateOne(
      { _id: s.id as never },
      { $unset: { active_payment_id: '', active_payment_claimed_at: '', claim_abandoned: '' } },
    );
    const winner = await race(api, s.id, { payment_method: 'multicaixa_reference' });
    expect(await storedClaim(s.id)).toBe(winner.body.id);
  });
});

describe('a claim left by a process that died between claiming and creating the payment', () => {
  const ghost = 'pay_000000000000000000ghost';

  it('blocks while it is fresh (its payment may still be on its way), and is repaired once stale', async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, { amount: 4000 });
    await CheckoutSessionModel.updateOne({ _id: s.id }, { $set: { active_payment_id: ghost, active_payment_claimed_at: new Date() } });
    expectError(await paySession(api, s.id, { payment_method: 'multicaixa_reference' }), 409, 'payment_already_processed');

    await CheckoutSessionModel.updateOne({ _id: s.id }, { $set: { active_payment_claimed_at: new Date(Date.now() - 10 * 60_000) } });
    const winner = await race(api, s.id, { payment_method: 'multicaixa_reference' });
    expect(await storedClaim(s.id)).toBe(winner.body.id);
    expect(await sessionPayments(api, s.id)).toHaveLength(1);
  });
});

describe('payments not made on the session page', () => {
  it('an API payment whose stored metadata names the session (written before the API refused the key) neither completes nor touches it', async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, { amount: 9000 });
    const res = await api.post(
      '/payment_intents',
      { amount: 9000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000000' } },
      { idempotencyKey: `api-meta-${Date.now()}` },
    );
    expect(res.status, res.text).toBe(201);
    // The API refuses metadata.checkout_session now: the old document is written directly.
    await PaymentModel.collection.updateOne({ _id: res.body.id as never }, { $set: { 'metadata.checkout_session': s.id } });

    await advanceClock(api, 5);
    const succeeded = (await api.get(`/payment_intents/${res.body.id}`)).body;
    expect(succeeded).toMatchObject({ status: 'SUCCEEDED', metadata: { checkout_session: s.id } });
    expect(await getSession(api, s.id)).toMatchObject({ status: 'OPEN', payment_intent: null });
    expect((await accountEvents(api)).some((e) => e.type === 'checkout.session.completed')).toBe(false);

    // The session is still the page's to pay.
    const page = await race(api, s.id, { payment_method: 'multicaixa_express', customer: { mobile: '923000000' } });
    await advanceClock(api, 5);
    expect(await getSession(api, s.id)).toMatchObject({ status: 'COMPLETED', payment_intent: page.body.id });
  });
});
