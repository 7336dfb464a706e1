import { expect } from 'vitest';
import type { TestAccount } from '../support/accounts';
import type { ApiResponse } from '../support/client';
import { createPayment, expressBody } from '../support/payments';

export { PUBLIC_PAYMENT_FIELDS as PUBLIC_VIEW_FIELDS } from '../support/payments';

/** An express payment made with the account's key (923000000: PROCESSING at +2 s, SUCCEEDED at +5 s). */
export function createExpressPayment(acct: TestAccount, mobile = '923000000'): Promise<any> {
  return createPayment(acct.api, expressBody(mobile, 15_000, { merchant_reference: 'order-7', metadata: { order: '7' } }));
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
