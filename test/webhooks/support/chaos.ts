import { expect } from 'vitest';
import { verifyWebhookSignature } from '@pgw/client';
import type { ApiClient } from '../../support/client';
import type { ReceivedRequest, Receiver } from '../../support/receiver';

/** PUT /webhook_endpoints/{id}/chaos (asserts 200) and the answer. */
export async function setChaos(api: ApiClient, endpointId: string, settings: Record<string, unknown>): Promise<any> {
  const res = await api.put(`/webhook_endpoints/${endpointId}/chaos`, settings);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

export async function chaosReport(api: ApiClient, endpointId: string): Promise<any> {
  const res = await api.get(`/webhook_endpoints/${endpointId}/chaos`);
  expect(res.status, res.text).toBe(200);
  return res.body.report;
}

/** POST /webhook_endpoints/{id}/test: the id of the queued test.ping. */
export async function ping(api: ApiClient, endpointId: string): Promise<string> {
  const res = await api.post(`/webhook_endpoints/${endpointId}/test`);
  expect(res.status, res.text).toBe(202);
  return res.body.event_id;
}

/** Whether the request carries a signature a careful receiver accepts (valid HMAC, fresh `t`). */
export function verifies(r: ReceivedRequest, secret: string): boolean {
  try {
    verifyWebhookSignature(r.rawBody, String(r.headers['service-signature']), secret);
    return true;
  } catch {
    return false;
  }
}

/**
 * Answers as a receiver that checks signatures (400 to a forged one) on `verifyingPath`, and as one that
 * takes everything (200) elsewhere.
 */
export function verifyOn(receiver: Receiver, verifyingPath: string, secretOf: () => string): void {
  receiver.reply = (r) => ({ status: r.path !== verifyingPath || verifies(r, secretOf()) ? 200 : 400 });
}

export const forEvent = (id: string) => (r: ReceivedRequest) => r.headers['service-event-id'] === id;
