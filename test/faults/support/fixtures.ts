import { createHash } from 'node:crypto';
import { createAccount, idempotencyKey, type TestAccount } from '../../support/accounts';
import type { ApiClient } from '../../support/client';
import type { Receiver } from '../../support/receiver';
import { createPayment } from '../../support/payments';
import { sleep, waitFor } from '../../support/wait';
import type { FuzzFixtures } from './generate';

export { sleep, waitFor };

/** The answer of `call` and how long it took (ms). */
export async function timed<T>(call: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await call();
  return { value, ms: performance.now() - started };
}

/**
 * The workloads' receiver refuses (503) the first attempt of about one event in five (chosen by the
 * event id's last character, so every process agrees), so that retries, durable timers, are part of
 * what must hold. Records the refused ids in `refused`.
 */
export function refuseSomeFirstAttempts(receiver: Receiver, refused = new Set<string>()): Set<string> {
  const attempts = new Map<string, number>();
  receiver.reply = (r) => {
    const id = String(r.headers['service-event-id']);
    const n = (attempts.get(id) ?? 0) + 1;
    attempts.set(id, n);
    const refuse = n === 1 && id.charCodeAt(id.length - 1) % 5 === 0;
    if (refuse) refused.add(id);
    return { status: refuse ? 503 : 200 };
  };
  return refused;
}

export async function ok<T = any>(p: Promise<{ status: number; body: T; text: string }>, status: number, what: string): Promise<T> {
  const res = await p;
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status}: ${res.text.slice(0, 500)}`);
  return res.body;
}

export const READ_PERMISSIONS = ['payment_intents', 'refunds', 'payment_links', 'checkout_sessions', 'webhook_endpoints', 'events', 'logs', 'account', 'sandbox'].map(
  (r) => `${r}:read`,
);

export { createPayment };

/** A reference payment paid at once through the simulate endpoint. */
export async function paidReferencePayment(api: ApiClient, amount: number): Promise<any> {
  const pi = await createPayment(api, { amount, currency: 'AOA', payment_method: 'multicaixa_reference' });
  return ok(api.post('/sandbox/simulate/reference_paid', { reference: pi.reference.number }), 200, 'simulate');
}

/** One object of every kind for the fuzzer (account A), and a few of another account (B). */
export async function createFuzzFixtures(baseUrl: string, receiverUrl: string): Promise<{ a: TestAccount; b: TestAccount; fx: FuzzFixtures }> {
  const [a, b] = await Promise.all([createAccount(baseUrl, 'fuzz A'), createAccount(baseUrl, 'fuzz B')]);
  const api = a.api;
  const readOnly = await ok(api.post('/api_keys', { name: 'read only', permissions: READ_PERMISSIONS }), 201, 'read-only key');
  const revoked = await ok(api.post('/api_keys', { name: 'revoked', permissions: ['events:read'] }), 201, 'key to revoke');
  await ok(api.delete(`/api_keys/${revoked.id}`), 200, 'revoke key');
  const spare = await Promise.all(Array.from({ length: 6 }, (_, i) => ok(api.post('/api_keys', { name: `spare ${i}`, permissions: ['logs:read'] }), 201, 'spare key')));
  const endpoint = await ok(api.post('/webhook_endpoints', { url: `${receiverUrl}/fuzz-a` }), 201, 'endpoint');

  const pending = await Promise.all(Array.from({ length: 12 }, () => createPayment(api, { amount: 20_000, currency: 'AOA', payment_method: 'multicaixa_reference' })));
  const paid: any[] = [];
  for (let i = 0; i < 16; i++) paid.push(await paidReferencePayment(api, 500_000));
  const express = await Promise.all(['923000000', '923000001', '923000002', '923000003', '923000004'].map((m) =>
    createPayment(api, { amount: 15_000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: m } }),
  ));
  const refund = await ok(api.post('/refunds', { payment_intent: paid[0].id, amount: 1_000 }, { idempotencyKey: idempotencyKey() }), 201, 'refund');
  const link = await ok(api.post('/payment_links', { amount: 5_000, description: 'fuzz link' }), 201, 'link');
  const publicPayment = await ok(api.post(`/public/payment_links/${link.code}/payments`, { payment_method: 'multicaixa_reference' }, { key: null }), 201, 'public payment');
  const session = await ok(api.post('/checkout/sessions', { amount: 5_000 }), 201, 'session');
  const [readToken, ...spareTokens] = await Promise.all(
    Array.from({ length: 4 }, () => ok(api.post('/client_tokens', { payment_intent: publicPayment.id }), 201, 'client token')),
  );
  const deliveries = await waitFor(
    async () => (await api.get(`/webhook_endpoints/${endpoint.id}/deliveries`)).body.data as any[],
    (d) => d.length > 0,
  );

  const bPay = await createPayment(b.api, { amount: 5_000, currency: 'AOA', payment_method: 'multicaixa_reference' });
  const bLink = await ok(b.api.post('/payment_links', { amount: 5_000 }), 201, 'B link');
  const bSession = await ok(b.api.post('/checkout/sessions', { amount: 5_000 }), 201, 'B session');
  const bEndpoint = await ok(b.api.post('/webhook_endpoints', { url: `${receiverUrl}/fuzz-b` }), 201, 'B endpoint');

  // Trusted documents that fuzzed DELETE /graphql/documents/{id} may remove.
  const spareTexts = Array.from({ length: 4 }, (_, i) => `query Spare${i} { account { id } }`);
  const spareDocuments = (await a.api.post('/graphql/documents', Object.fromEntries(spareTexts.map((t) => [createHash('sha256').update(t).digest('hex'), t])))).body.data as Array<{ id: string }>;

  const fx: FuzzFixtures = {
    sk: a.sk,
    pk: a.pk,
    readOnlyKey: readOnly.secret,
    revokedKey: revoked.secret,
    otherSk: b.sk,
    paymentIds: [...pending, ...paid, ...express].map((p) => p.id),
    paidPaymentIds: paid.map((p) => p.id),
    referenceNumbers: pending.map((p) => p.reference.number),
    publicPaymentId: publicPayment.id,
    refundId: refund.id,
    linkId: link.id,
    linkCode: link.code,
    sessionId: session.id,
    endpointId: endpoint.id,
    deliveryId: deliveries[0].id,
    clientToken: readToken.token,
    spareClientTokenIds: spareTokens.map((t) => t.id),
    spareKeyIds: spare.map((k) => k.id),
    spareDocumentIds: spareDocuments.map((d) => d.id),
    receiverUrl,
    foreignIds: [bPay.id, bLink.id, bLink.code, bSession.id, bEndpoint.id],
  };
  return { a, b, fx };
}
