import type { components } from '../../../generated/openapi';
import type { CheckoutSessionRecord } from './checkoutSessionModel';

/** The contract's CheckoutSession (openapi.yaml, generated/openapi.ts): the serializer is held to it. */
export type CheckoutSessionResource = components['schemas']['CheckoutSession'];

/**
 * What the hosted page may know: what to pay, how, where to go afterwards. Not the merchant's own
 * reference, which is between the merchant and the gateway.
 */
export type PublicCheckoutSession = components['schemas']['PublicCheckoutSession'];

/** `{checkout_url}/<session id>` with `{checkout_url}` = PUBLIC_BASE_URL + "/checkout". */
export function checkoutSessionUrl(publicBaseUrl: string, id: string): string {
  return `${publicBaseUrl}/checkout/${id}`;
}

type SessionFields = Omit<CheckoutSessionRecord, 'pending_events' | 'account_id' | 'seq' | 'updated_at'>;

/** Exactly the CheckoutSession fields of the specification, in its order. */
export function toCheckoutSessionResource(s: SessionFields, publicBaseUrl: string): CheckoutSessionResource {
  return {
    id: s._id,
    object: 'checkout_session',
    url: checkoutSessionUrl(publicBaseUrl, s._id),
    amount: s.amount,
    currency: 'AOA',
    methods: [...s.methods],
    status: s.status,
    payment_intent: s.payment_intent ?? null,
    merchant_reference: s.merchant_reference ?? null,
    success_url: s.success_url ?? null,
    cancel_url: s.cancel_url ?? null,
    expires_at: new Date(s.expires_at).toISOString(),
    livemode: s.livemode ?? false,
    created_at: new Date(s.created_at).toISOString(),
  };
}

/** The page's view: the resource without what only the merchant needs (its reference, its creation time). */
export function toPublicCheckoutSession(s: SessionFields, publicBaseUrl: string): PublicCheckoutSession {
  const { merchant_reference: _reference, created_at: _created, ...view } = toCheckoutSessionResource(s, publicBaseUrl);
  return view;
}
