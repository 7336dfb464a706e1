import { expect } from 'vitest';
import type { ApiClient, ApiResponse } from '../../support/client';

/** The shared helpers of test/support (one definition each), under the names these suites use. */
export { accountEvents, advanceClock, expectError, PUBLIC_PAYMENT_FIELDS } from '../../support/payments';
export { startGatewayWithJobs } from '../../support/server';
export { sleep, waitFor } from '../../support/wait';

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

/**
 * GET of a non-JSON operation (the QR SVG). The shared ApiClient checks responses against the generated
 * JSON validators, which have no entry for image/svg+xml, so these go through fetch directly.
 */
export async function getRaw(baseUrl: string, path: string, key: string | null): Promise<{ status: number; contentType: string; text: string }> {
  const res = await fetch(`${baseUrl}/v1${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', text: await res.text() };
}
