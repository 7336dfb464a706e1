import { expect } from 'vitest';
import { startCoreJobs, stopCoreJobs } from '../../../src/domain/payments/payments.jobs';
import type { ApiClient, ApiResponse } from '../../support/client';
import { startTestServer, type TestServer } from '../../support/server';
import { sleep, waitFor } from '../../support/wait';

export { sleep, waitFor };

/**
 * The real gateway with the payments core's background work running (timer poller, outbox sweeper),
 * for the link, checkout and page tests. Starting the jobs is idempotent, so this keeps working once
 * server.ts starts them itself.
 */
export async function startGatewayWithJobs(env: Record<string, string> = {}): Promise<TestServer> {
  const server = await startTestServer(env);
  startCoreJobs({ timerPollMs: 100 });
  return {
    ...server,
    stop: async () => {
      await stopCoreJobs();
      await server.stop();
    },
  };
}



export function expectError(res: ApiResponse, status: number, code: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body.error.code, res.text).toBe(code);
}

export async function createLink(api: ApiClient, body: Record<string, unknown>): Promise<any> {
  const res = await api.post('/payment_links', body);
  expect(res.status, res.text).toBe(201);
  return res.body;
}

export async function createSession(api: ApiClient, body: Record<string, unknown>): Promise<any> {
  const res = await api.post('/checkout/sessions', body);
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** A customer's payment on a checkout session's page (public route, no key). */
export function paySession(api: ApiClient, id: string, body: unknown): Promise<ApiResponse> {
  return api.post(`/public/checkout/sessions/${id}/payments`, body, { key: null });
}

/** The merchant's view of a checkout session (asserts 200). */
export async function getSession(api: ApiClient, id: string): Promise<any> {
  const res = await api.get(`/checkout/sessions/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Moves the account's sandbox clock ahead (asserts 200). */
export async function advanceClock(api: ApiClient, seconds: number): Promise<void> {
  const res = await api.post('/sandbox/clock/advance', { seconds });
  expect(res.status, res.text).toBe(200);
}

/** All events of the account, oldest first. */
export async function accountEvents(api: ApiClient): Promise<any[]> {
  const res = await api.get('/events?limit=100');
  expect(res.status, res.text).toBe(200);
  return [...res.body.data].reverse();
}

/** The fields of the public view of a payment, and nothing else (contract decisions). */
export const PUBLIC_PAYMENT_FIELDS = [
  'id', 'object', 'amount', 'currency', 'payment_method', 'status', 'failure_code', 'reference',
  'amount_refunded', 'livemode', 'created_at', 'updated_at',
].sort();

/**
 * GET of a non-JSON operation (the QR SVG). The shared ApiClient checks responses against the generated
 * JSON validators, which have no entry for image/svg+xml, so these go through fetch directly.
 */
export async function getRaw(baseUrl: string, path: string, key: string | null): Promise<{ status: number; contentType: string; text: string }> {
  const res = await fetch(`${baseUrl}/v1${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', text: await res.text() };
}
