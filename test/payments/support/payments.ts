import { expect } from 'vitest';
import { startCoreJobs, stopCoreJobs } from '../../../src/domain/payments/payments.jobs';
import { createAccount, idempotencyKey, type TestAccount } from '../../support/accounts';
import type { ApiClient, ApiResponse } from '../../support/client';
import { startTestServer, type TestServer } from '../../support/server';
import { sleep, waitFor } from '../../support/wait';

export { sleep, waitFor };

/**
 * The real gateway over the in-memory engine, with the payments core's background work (timer poller,
 * outbox sweeper) running. Starting the jobs is idempotent, so this keeps working once server.ts
 * starts them itself.
 */
export async function startPaymentsServer(): Promise<TestServer> {
  const server = await startTestServer();
  startCoreJobs({ timerPollMs: 100 });
  return {
    ...server,
    stop: async () => {
      await stopCoreJobs();
      await server.stop();
    },
  };
}

export { createAccount, idempotencyKey, type TestAccount };


export function expressBody(mobile = '923000000', amount = 15_000, extra: Record<string, unknown> = {}) {
  return { amount, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile }, ...extra };
}

export function referenceBody(amount = 25_000, extra: Record<string, unknown> = {}) {
  return { amount, currency: 'AOA', payment_method: 'multicaixa_reference', ...extra };
}

export async function createPayment(api: ApiClient, body: Record<string, unknown>): Promise<any> {
  const res = await api.post('/payment_intents', body, { idempotencyKey: idempotencyKey() });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

export async function getPayment(api: ApiClient, id: string): Promise<any> {
  const res = await api.get(`/payment_intents/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

export async function advance(api: ApiClient, seconds: number): Promise<any> {
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


export function expectError(res: ApiResponse, status: number, code: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body.error.code, res.text).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
  expect(res.body.error.request_id).toMatch(/^req_/);
}
