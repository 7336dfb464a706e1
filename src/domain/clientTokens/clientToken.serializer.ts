import { iso } from '../payments/payment.serializer';
import type { ClientTokenRecord } from './clientToken.model';

export interface ClientTokenResource {
  object: 'client_token';
  id: string;
  /** The secret; only in the answer that created the token. */
  token: string;
  payment_intent: string;
  expires_at: string;
  created_at: string;
}

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

export function toDeletedClientToken(id: string): { id: string; object: 'client_token'; deleted: true } {
  return { id, object: 'client_token', deleted: true };
}
