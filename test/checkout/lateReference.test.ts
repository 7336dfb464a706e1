import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckoutSessionModel } from '../../src/domain/checkout/checkoutSessionModel';
import { createAccount } from '../support/accounts';
import type { TestServer } from '../support/server';
import { accountEvents, advanceClock, createSession, expectError, getSession, paySession, waitFor } from '../links/support/gateway';
import { sharedGateway } from '../support/server';

/**
 * A checkout session with a PENDING reference payment does not expire at +30 min: it follows that
 * payment (COMPLETED with `checkout.session.completed` when it is paid, EXPIRED when it expires), and
 * after +30 min no new payment can be started on it (409 `payment_already_processed`). Contract
 * decisions, "Payment links, QR codes, checkout"; issue 15 item 3. Driven by the sandbox clock.
 */
let server: TestServer;
beforeAll(async () => {
  server = await sharedGateway();
});
afterAll(async () => server?.stop());

const storedStatus = async (id: string) => (await CheckoutSessionModel.findById(id, { status: 1 }).lean())?.status;

const EXPRESS = { payment_method: 'multicaixa_express', customer: { mobile: '923000000' } };
const REFERENCE = { payment_method: 'multicaixa_reference' };

describe('a session whose reference payment is still PENDING at +30 min', () => {
  it('stays OPEN, refuses new payments, and completes when the reference is paid days later', async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, { amount: 18_000, merchant_reference: 'order-late-1', cancel_url: 'https://shop.example/cart' });
    const paid = await paySession(api, s.id, REFERENCE);
    expect(paid.status, paid.text).toBe(201);

    await advanceClock(api, 31 * 60);
    // The expiry timer fired during the advance and left the session alone: stored OPEN, read OPEN.
    expect(await storedStatus(s.id)).toBe('OPEN');
    expect(await getSession(api, s.id)).toMatchObject({ status: 'OPEN', payment_intent: null, expires_at: s.expires_at });
    expect((await api.get(`/public/checkout/sessions/${s.id}`, { key: null })).body.status).toBe('OPEN');

    // Past its 30 minutes nothing new can be started on it, by either method, however many try.
    const attempts = await Promise.all([
      paySession(api, s.id, REFERENCE),
      paySession(api, s.id, EXPRESS),
      paySession(api, s.id, REFERENCE),
    ]);
    for (const r of attempts) expectError(r, 409, 'payment_already_processed');
    // The page says what is left to do instead of offering a form that cannot be used.
    const page = await fetch(`${server.baseUrl}/checkout/${s.id}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('waiting for its reference payment');
    expect(html).not.toContain('<form');

    // Two days later the customer pays the reference at an ATM.
    await advanceClock(api, 2 * 24 * 3600);
    expect((await getSession(api, s.id)).status).toBe('OPEN');
    const sim = await api.post('/sandbox/simulate/reference_paid', { reference: paid.body.reference.number });
    expect(sim.status, sim.text).toBe(200);

    // The payment's hook completes the session and stores its event, after the simulation has answered:
    // wait for the session to say so rather than race the hook (a loaded machine lost that race once).
    const done = await waitFor(
      () => getSession(api, s.id),
      (session) => session.status !== 'OPEN',
      10_000,
    );
    expect(done).toMatchObject({ status: 'COMPLETED', payment_intent: paid.body.id });
    const events = await waitFor(
      () => accountEvents(api),
      (list) => list.some((e) => e.type === 'checkout.session.completed'),
      10_000,
    );
    const completed = events.filter((e) => e.type === 'checkout.session.completed');
    expect(completed).toHaveLength(1);
    expect(completed[0].data).toMatchObject({ id: s.id, status: 'COMPLETED', payment_intent: paid.body.id, merchant_reference: 'order-late-1' });
    expect(events.findIndex((e) => e.type === 'payment.succeeded')).toBeLessThan(events.indexOf(completed[0]));

    // Completed for good: the reference's 72 h passing later changes nothing.
    await advanceClock(api, 2 * 24 * 3600);
    expect(await getSession(api, s.id)).toMatchObject({ status: 'COMPLETED', payment_intent: paid.body.id });
    expectError(await paySession(api, s.id, REFERENCE), 409, 'payment_already_processed');
  });

  it('expires with its reference at +72 h, not before; no checkout.session.completed', async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, { amount: 7000 });
    const paid = await paySession(api, s.id, REFERENCE);
    expect(paid.status, paid.text).toBe(201);

    await advanceClock(api, 31 * 60);
    expect((await getSession(api, s.id)).status).toBe('OPEN');
    await advanceClock(api, 72 * 3600 - 31 * 60 - 10);
    expect((await getSession(api, s.id)).status).toBe('OPEN');
    expect((await api.get(`/payment_intents/${paid.body.id}`)).body.status).toBe('PENDING');

    await advanceClock(api, 11);
    expect((await api.get(`/payment_intents/${paid.body.id}`)).body.status).toBe('EXPIRED');
    // Expired by the payment.expired hook during the advance, before anything read the session.
    expect(await storedStatus(s.id)).toBe('EXPIRED');
    expect(await getSession(api, s.id)).toMatchObject({ status: 'EXPIRED', payment_intent: null });
    expectError(await paySession(api, s.id, REFERENCE), 409, 'payment_already_processed');
    expect((await fetch(`${server.baseUrl}/checkout/${s.id}`)).status).toBe(410);
    expect((await accountEvents(api)).some((e) => e.type === 'checkout.session.completed')).toBe(false);
  });

  it('expires at once when that reference is cancelled after +30 min', async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, { amount: 7000 });
    const paid = await paySession(api, s.id, REFERENCE);
    expect(paid.status, paid.text).toBe(201);
    await advanceClock(api, 31 * 60);
    expect((await getSession(api, s.id)).status).toBe('OPEN');

    expect((await api.post(`/payment_intents/${paid.body.id}/cancel`)).status).toBe(200);
    // The payment.cancelled hook gives the claim back and expires the session (its 30 minutes are over).
    expect(await waitFor(() => storedStatus(s.id), (status) => status === 'EXPIRED', 10_000, 50)).toBe('EXPIRED');
    expectError(await paySession(api, s.id, REFERENCE), 409, 'payment_already_processed');
  });

  it('a reference cancelled before +30 min leaves the session to expire on time, as an unpaid one', async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, { amount: 7000 });
    const paid = await paySession(api, s.id, REFERENCE);
    expect((await api.post(`/payment_intents/${paid.body.id}/cancel`)).status).toBe(200);
    await advanceClock(api, 60);
    expect((await getSession(api, s.id)).status).toBe('OPEN');
    await advanceClock(api, 30 * 60);
    expect(await storedStatus(s.id)).toBe('EXPIRED');
  });
});
