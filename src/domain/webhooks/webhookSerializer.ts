import type { components } from '../../../generated/openapi';
import { iso } from '../payments/paymentSerializer';
import type { ChaosKind } from './chaos';
import type { WebhookDeliveryRecord } from './webhookDeliveryModel';
import type { WebhookEndpointRecord } from './webhookEndpointModel';

/**
 * The contract's WebhookEndpoint (openapi.yaml, generated/openapi.ts); `secret` only in the creation and
 * rotate_secret responses (the contract's WebhookEndpointWithSecret).
 */
export type WebhookEndpointResource = components['schemas']['WebhookEndpoint'] & { secret?: string };
export type WebhookEndpointWithSecretResource = components['schemas']['WebhookEndpointWithSecret'];

export interface WebhookDeliveryResource {
  id: string;
  object: 'webhook_delivery';
  event_id: string;
  event_type: string;
  state: WebhookDeliveryRecord['state'];
  attempts: number;
  last_status: number | null;
  last_ms: number | null;
  last_attempt_at: string | null;
  last_error: string | null;
  next_attempt_at: string | null;
  request_body: string | null;
  signature_header: string | null;
  chaos: ChaosKind | null;
}

/** Never includes a secret: callers add the new one explicitly where the contract shows it. */
export function toWebhookEndpointResource(e: WebhookEndpointRecord): WebhookEndpointResource {
  return {
    id: e._id,
    object: 'webhook_endpoint',
    url: e.url ?? null,
    mode: e.mode ?? 'push',
    events: [...e.events],
    name: e.name ?? null,
    description: e.description ?? null,
    created_at: iso(e.created_at),
    chaos: e.chaos ?? null,
  };
}

export function toWebhookDeliveryResource(d: WebhookDeliveryRecord): WebhookDeliveryResource {
  return {
    id: d._id,
    object: 'webhook_delivery',
    event_id: d.event_id,
    event_type: d.event_type,
    state: d.state,
    attempts: d.attempts,
    last_status: d.last_status ?? null,
    last_ms: d.last_ms ?? null,
    last_attempt_at: d.last_attempt_at ? iso(d.last_attempt_at) : null,
    // Documents written before last_error existed have none: null, as after a 2xx.
    last_error: d.last_error ?? null,
    // Only a live delivery has a retry ahead; a manual retry's success leaves none behind.
    next_attempt_at: d.state === 'RETRYING' && d.next_attempt_at ? iso(d.next_attempt_at) : null,
    // The body never changes between attempts; it is shown once an attempt has sent it.
    request_body: d.attempts > 0 ? d.body : null,
    signature_header: d.signature_header ?? null,
    chaos: d.chaos ?? null,
  };
}
