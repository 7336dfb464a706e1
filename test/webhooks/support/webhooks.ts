import { expect } from 'vitest';
import type { ApiClient } from '../../support/client';
import { sleep, waitFor } from '../../support/wait';

export { sleep, waitFor };


export async function createEndpoint(api: ApiClient, url: string, extra: Record<string, unknown> = {}): Promise<any> {
  const res = await api.post('/webhook_endpoints', { url, ...extra });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

export async function deliveries(api: ApiClient, endpointId: string): Promise<any[]> {
  const res = await api.get(`/webhook_endpoints/${endpointId}/deliveries`);
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}


export async function advance(api: ApiClient, seconds: number): Promise<void> {
  const res = await api.post('/sandbox/clock/advance', { seconds });
  expect(res.status, res.text).toBe(200);
}

export function expressBody(mobile = '923000000', amount = 15_000) {
  return { amount, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile } };
}

export function referenceBody(amount = 25_000) {
  return { amount, currency: 'AOA', payment_method: 'multicaixa_reference' };
}

let keyCounter = 0;
export async function createPayment(api: ApiClient, body: Record<string, unknown>): Promise<any> {
  const res = await api.post('/payment_intents', body, { idempotencyKey: `whtest-${Date.now()}-${++keyCounter}` });
  expect(res.status, res.text).toBe(201);
  return res.body;
}
