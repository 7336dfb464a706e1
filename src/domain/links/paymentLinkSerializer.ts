import type { components } from '../../../generated/openapi';
import type { PaymentLinkRecord } from './paymentLinkModel';

/** The contract's PaymentLink (openapi.yaml, generated/openapi.ts): the serializer is held to it. */
export type PaymentLinkResource = components['schemas']['PaymentLink'];

/** What the public page may know of a link: no account, no id, nothing the merchant did not publish. */
export type PublicPaymentLink = components['schemas']['PublicPaymentLink'];

/** The public page of a link: `{pay_url}/<code>` with `{pay_url}` = PUBLIC_BASE_URL + "/pay". */
export function paymentLinkUrl(publicBaseUrl: string, code: string): string {
  return `${publicBaseUrl}/pay/${code}`;
}

/** Exactly the PaymentLink fields of the specification, in its order. */
export function toPaymentLinkResource(link: PaymentLinkRecord, publicBaseUrl: string): PaymentLinkResource {
  return {
    id: link._id,
    object: 'payment_link',
    code: link.code,
    url: paymentLinkUrl(publicBaseUrl, link.code),
    amount: link.amount,
    currency: 'AOA',
    methods: [...link.methods],
    description: link.description ?? null,
    active: link.active,
    livemode: link.livemode ?? false,
    created_at: new Date(link.created_at).toISOString(),
  };
}

/** The public page's view: the resource without the merchant's own id and state. */
export function toPublicPaymentLink(link: PaymentLinkRecord, publicBaseUrl: string): PublicPaymentLink {
  const { id: _id, active: _active, created_at: _created, ...view } = toPaymentLinkResource(link, publicBaseUrl);
  return view;
}
