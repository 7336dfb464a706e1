import type { components } from '../../../generated/openapi';
import { iso } from '../payments/paymentSerializer';
import type { ClientTokenRecord } from './clientTokenModel';

/** The contract's ClientTokenWithSecret (openapi.yaml, generated/openapi.ts): the serializer is held to it. */
export type ClientTokenResource = components['schemas']['ClientTokenWithSecret'];

export function toClientTokenResource(record: ClientTokenRecord, token: string): ClientTokenResource {
  return {
    object: 'client_token',
    id: record._id,
    token,
    payment_intent: record.payment_intent,
    expires_at: iso(record.expires_at),
    created_at: iso(record.created_at),
  };
}

export function toDeletedClientToken(id: string): components['schemas']['DeletedClientToken'] {
  return { id, object: 'client_token', deleted: true };
}
