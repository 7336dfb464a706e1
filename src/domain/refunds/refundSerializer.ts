import type { components } from '../../../generated/openapi';
import type { RefundRecord } from '../payments/paymentModel';
import { iso } from '../payments/paymentSerializer';

/** The contract's Refund (openapi.yaml, generated/openapi.ts): the serializer is held to it. */
export type RefundResource = components['schemas']['Refund'];

/** Exactly the Refund fields of the specification. Refunds live inside their payment intent. */
export function toRefundResource(refund: RefundRecord, paymentId: string, livemode = false): RefundResource {
  return {
    id: refund._id,
    object: 'refund',
    payment_intent: paymentId,
    amount: refund.amount,
    status: refund.status,
    livemode,
    created_at: iso(refund.created_at),
    updated_at: iso(refund.updated_at),
  };
}
