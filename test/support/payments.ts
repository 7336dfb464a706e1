/**
 * The REST calls most suites make, once: request bodies, creating and reading payments, the sandbox
 * clock, the account's events, and the error envelope. Each asserts the status it expects, so a test
 * reads as its scenario.
 */
import { expect } from 'vitest';
import { idempotencyKey } from './accounts';
import type { ApiClient, ApiResponse } from './client';

/** An express payment's body; `923000000` succeeds (docs/api.md, "Sandbox scenarios"). */
export function expressBody(mobile = '923000000', amount = 15_000, extra: Record<string, unknown> = {}) {
  return { amount, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile }, ...extra };
}

/** A reference payment's body: PENDING until paid through /sandbox/simulate/reference_paid. */
export function referenceBody(amount = 25_000, extra: Record<string, unknown> = {}) {
  return { amount, currency: 'AOA', payment_method: 'multicaixa_reference', ...extra };
}

/** The fields of the public view of a payment (client tokens, pages, public stream), and nothing else (contract decisions). */
export const PUBLIC_PAYMENT_FIELDS = [
  'id', 'object', 'amount', 'currency', 'payment_method', 'status', 'failure_code', 'reference',
  'amount_refunded', 'livemode', 'created_at', 'updated_at',
].sort();

/** POST /payment_intents with a fresh Idempotency-Key (or `key`); asserts 201. */
export async function createPayment(api: ApiClient, body: Record<string, unknown>, key = idempotencyKey()): Promise<any> {
  const res = await api.post('/payment_intents', body, { idempotencyKey: key });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** `count` express payments of 1000, 2000, … AOA, created one after the other; their ids, oldest first. */
export async function createPayments(api: ApiClient, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 1; i <= count; i++) ids.push((await createPayment(api, expressBody('923000000', 1000 * i))).id);
  return ids;
}

/**
 * `count` express payments of 1000, 2000, … AOA, created concurrently: for a list whose order the test
 * does not read. Their ids, by amount.
 */
export async function createPaymentsAtOnce(api: ApiClient, count: number): Promise<string[]> {
  return Promise.all(Array.from({ length: count }, async (_, i) => (await createPayment(api, expressBody('923000000', 1000 * (i + 1)))).id));
}

export async function getPayment(api: ApiClient, id: string): Promise<any> {
  const res = await api.get(`/payment_intents/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Moves the account's sandbox clock ahead (asserts 200); every timer due in the span has fired when it returns. */
export async function advanceClock(api: ApiClient, seconds: number): Promise<any> {
  const res = await api.post('/sandbox/clock/advance', { seconds });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** All events of the account, oldest first (GET /events is newest first). */
export async function accountEvents(api: ApiClient): Promise<any[]> {
  const res = await api.get('/events?limit=100');
  expect(res.status, res.text).toBe(200);
  return [...res.body.data].reverse();
}

/** Events about one payment (payment.* / reference.paid carry it as data.id, refunds as data.payment_intent). */
export async function paymentEvents(api: ApiClient, paymentId: string): Promise<any[]> {
  return (await accountEvents(api)).filter((e) => e.data.id === paymentId || e.data.payment_intent === paymentId);
}

/** The error envelope with this status and code (and a message and request id). */
export function expectError(res: ApiResponse, status: number, code: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body.error.code, res.text).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
  expect(res.body.error.request_id).toMatch(/^req_/);
}
