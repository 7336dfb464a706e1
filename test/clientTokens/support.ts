import { expect } from 'vitest';
import { idempotencyKey, type TestAccount } from '../support/accounts';
import type { ApiResponse } from '../support/client';

/** The fields of the public view of a payment (contract decisions), and nothing else. */
export const PUBLIC_VIEW_FIELDS = [
  'id', 'object', 'amount', 'currency', 'payment_method', 'status', 'failure_code', 'reference',
  'amount_refunded', 'livemode', 'created_at', 'updated_at',
].sort();

/** An express payment made with the account's key (923000000: PROCESSING at +2 s, SUCCEEDED at +5 s). */
export async function createExpressPayment(acct: TestAccount, mobile = '923000000'): Promise<any> {
  const res = await acct.api.post(
    '/payment_intents',
    { amount: 15_000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile }, merchant_reference: 'order-7', metadata: { order: '7' } },
    { idempotencyKey: idempotencyKey() },
  );
  expect(res.status, res.text).toBe(201);
  return res.body;
}

export async function mintToken(acct: TestAccount, paymentId: string, expiresIn?: number): Promise<{ id: string; token: string; expires_at: string }> {
  const res = await acct.api.post('/client_tokens', { payment_intent: paymentId, ...(expiresIn && { expires_in: expiresIn }) });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

export function expectErrorEnvelope(res: ApiResponse, status: number, code: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body.error.code, res.text).toBe(code);
  expect(res.body.error.request_id).toBe(res.headers.get('request-id'));
}
