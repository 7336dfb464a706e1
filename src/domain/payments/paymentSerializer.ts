import type { components } from '../../../generated/openapi';
import type { PaymentRecord } from './paymentModel';

/** ISO 8601 UTC with milliseconds. */
export function iso(value: Date | string | number): string {
  // A stored date reads back as a Date: formatted as it is, without a copy (every resource has two or three).
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

/** The contract's PaymentIntent (openapi.yaml, generated/openapi.ts): the serializer is held to it. */
export type PaymentIntentResource = components['schemas']['PaymentIntent'];

type PaymentFields = Pick<
  PaymentRecord,
  | '_id' | 'amount' | 'payment_method' | 'status' | 'failure_code' | 'customer' | 'merchant_reference' | 'reference'
  | 'amount_refunded' | 'fee' | 'fee_version' | 'api_key_id' | 'metadata' | 'livemode' | 'created_at' | 'updated_at'
>;

/** Exactly the PaymentIntent fields of the specification, in its order. */
export function toPaymentIntentResource(p: PaymentFields): PaymentIntentResource {
  return {
    id: p._id,
    object: 'payment_intent',
    amount: p.amount,
    currency: 'AOA',
    payment_method: p.payment_method,
    status: p.status,
    failure_code: p.failure_code ?? null,
    customer: p.customer ? { mobile: p.customer.mobile } : null,
    merchant_reference: p.merchant_reference ?? null,
    reference: p.reference
      ? { entity: p.reference.entity, number: p.reference.number, expires_at: iso(p.reference.expires_at) }
      : null,
    amount_refunded: p.amount_refunded ?? 0,
    fee: p.fee ?? null,
    fee_version: p.fee_version ?? null,
    api_key_id: p.api_key_id ?? null,
    metadata: { ...(p.metadata ?? {}) },
    livemode: p.livemode ?? false,
    created_at: iso(p.created_at),
    updated_at: iso(p.updated_at),
  };
}

/** The contract's PublicPaymentIntent. */
export type PublicPaymentView = components['schemas']['PublicPaymentIntent'];

/**
 * The public view of a payment (pages and the public stream, contract decisions): no customer,
 * metadata, fee or key id. Accepts a record or an already serialized PaymentIntent (event data).
 */
export function toPublicPaymentView(p: PaymentFields | PaymentIntentResource): PublicPaymentView {
  const r = 'object' in p ? p : toPaymentIntentResource(p);
  return {
    id: r.id,
    object: 'payment_intent',
    amount: r.amount,
    currency: 'AOA',
    payment_method: r.payment_method,
    status: r.status,
    failure_code: r.failure_code,
    reference: r.reference,
    amount_refunded: r.amount_refunded,
    livemode: r.livemode,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}
