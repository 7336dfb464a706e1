import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CheckoutSessionModel } from '../../src/domain/checkout/checkoutSessionModel';
import { createAccount } from '../support/accounts';
import type { TestServer } from '../support/server';
import { createSession, expectError, paySession, startGatewayWithJobs, waitFor } from '../links/support/gateway';

/**
 * The one case the HTTP tests cannot time by themselves: a claimant that stalls between claiming the
 * session and inserting its payment for longer than the stale-claim limit, while another customer
 * comes along. The payments core's create is wrapped (in this process, where the test server runs) so
 * the test can stall it once, at exactly that point.
 */
let beforeCreate: (() => Promise<void>) | null = null;
vi.mock('../../src/domain/payments/paymentService', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/domain/payments/paymentService')>();
  return {
    ...real,
    createPaymentIntent: async (...args: Parameters<typeof real.createPaymentIntent>) => {
      const hook = beforeCreate;
      beforeCreate = null;
      if (hook) await hook();
      return real.createPaymentIntent(...args);
    },
  };
});

let server: TestServer;
beforeAll(async () => {
  server = await startGatewayWithJobs();
});
afterAll(async () => server?.stop());

describe('a claimant that stalls past the stale-claim limit', () => {
  it('loses to the customer who repaired its claim: its late payment is cancelled and it answers 409', async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, { amount: 6000 });
    let second: Awaited<ReturnType<typeof paySession>> | undefined;
    beforeCreate = async () => {
      // The claim is taken; make it look old, and let another attempt run to its end meanwhile.
      await CheckoutSessionModel.updateOne({ _id: s.id }, { $set: { active_payment_claimed_at: new Date(Date.now() - 10 * 60_000) } });
      second = await paySession(api, s.id, { payment_method: 'multicaixa_reference' });
    };
    const first = await paySession(api, s.id, { payment_method: 'multicaixa_reference' });

    expect(second?.status, second?.text).toBe(201);
    expectError(first, 409, 'payment_already_processed');
    const payments = (await api.get('/payment_intents?limit=10')).body.data.filter((p: any) => p.metadata?.checkout_session === s.id);
    // The stalled one was inserted after all, and cancelled at once: one payment left in flight.
    expect(payments.map((p: any) => p.status).sort()).toEqual(['CANCELLED', 'PENDING']);
    const live = payments.find((p: any) => p.status === 'PENDING');
    expect(live.id).toBe(second!.body.id);
    const stored = await CheckoutSessionModel.findById(s.id).lean();
    expect(stored).toMatchObject({ active_payment_id: second!.body.id, claim_abandoned: false, status: 'OPEN' });
  });

  it('finds its claim marked abandoned (the repairer then saw its payment and left the claim): cancels, and the claim comes free', async () => {
    const { api } = await createAccount(server.baseUrl);
    const s = await createSession(api, { amount: 6000 });
    beforeCreate = async () => {
      await CheckoutSessionModel.updateOne({ _id: s.id }, { $set: { claim_abandoned: true } });
    };
    expectError(await paySession(api, s.id, { payment_method: 'multicaixa_reference' }), 409, 'payment_already_processed');
    const payments = (await api.get('/payment_intents?limit=10')).body.data.filter((p: any) => p.metadata?.checkout_session === s.id);
    expect(payments.map((p: any) => p.status)).toEqual(['CANCELLED']);
    // Its payment.cancelled hook gives the claim back; the next customer can pay.
    await waitFor(() => CheckoutSessionModel.findById(s.id).lean(), (x) => x?.active_payment_id === null);
    const next = await paySession(api, s.id, { payment_method: 'multicaixa_reference' });
    expect(next.status, next.text).toBe(201);
  });
});
