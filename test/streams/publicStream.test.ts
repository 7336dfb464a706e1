import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentModel } from '../../src/domain/payments/paymentModel';
import { createAccount } from '../support/accounts';
import { ApiClient } from '../support/client';
import { type TestServer } from '../support/server';
import { createPayment, referenceBody } from '../webhooks/support/webhooks';
import { openSse } from './support/sseClient';
import { sharedGateway } from '../support/server';

/**
 * The public stream (`GET /v1/public/payments/{id}/events`, no credentials) shows only payments made on
 * a payment-link or checkout page. "Made on a page" is what the gateway recorded when it created the
 * payment (`payment_link_id` / `checkout_session_id`), never the payment's metadata: before the API
 * refused the keys `payment_link` and `checkout_session` in `metadata` (144008c), an API caller could
 * store them, and such payments must stay private.
 */
let server: TestServer;
beforeAll(async () => {
  server = await sharedGateway();
});
afterAll(async () => server?.stop());

const publicStream = (id: string) => openSse(`${server.baseUrl}/v1/public/payments/${id}/events`);

describe('which payments the public stream shows', () => {
  it('a payment made on a link page: yes', async () => {
    const { api } = await createAccount(server.baseUrl);
    const link = await api.post('/payment_links', { amount: 12_000 });
    expect(link.status, link.text).toBe(201);
    const paid = await new ApiClient(server.baseUrl).post(`/public/payment_links/${link.body.code}/payments`, { payment_method: 'multicaixa_reference' });
    expect(paid.status, paid.text).toBe(201);
    const stream = await publicStream(paid.body.id);
    expect(stream.status).toBe(200);
    await stream.waitFor((m) => m.length >= 1);
    stream.close();
  });

  it.each([
    ['checkout_session', 'cs_KbDRoe7DDnnozY3aOwehgCVD'],
    ['payment_link', 'plink_KbDRoe7DDnnozY3aOwehgCVD'],
  ])('an API payment whose stored metadata carries %s (written before the API refused the key): no, 404', async (key, value) => {
    const { api } = await createAccount(server.baseUrl);
    // The API refuses the key now, so the old document is written directly.
    expect((await api.post('/payment_intents', { ...referenceBody(), metadata: { [key]: value } }, { idempotencyKey: `meta-${key}-${Date.now()}` })).status).toBe(400);
    const pi = await createPayment(api, referenceBody());
    await PaymentModel.collection.updateOne({ _id: pi.id as never }, { $set: { [`metadata.${key}`]: value } });
    expect((await api.get(`/payment_intents/${pi.id}`)).body.metadata).toEqual({ [key]: value });

    const stream = await publicStream(pi.id);
    expect(stream.status).toBe(404);
    expect(JSON.parse(stream.text!).error.code).toBe('resource_not_found');
  });
});
