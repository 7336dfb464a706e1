/** Webhook endpoints and their deliveries as the merchant sees them over REST. */
import { expect } from 'vitest';
import type { ApiClient } from './client';

/** POST /webhook_endpoints (asserts 201); the answer holds the endpoint's `secret`, shown only then. */
export async function createEndpoint(api: ApiClient, url: string, extra: Record<string, unknown> = {}): Promise<any> {
  const res = await api.post('/webhook_endpoints', { url, ...extra });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** The endpoint's deliveries as recorded, newest first (asserts 200). */
export async function deliveries(api: ApiClient, endpointId: string): Promise<any[]> {
  const res = await api.get(`/webhook_endpoints/${endpointId}/deliveries`);
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}
