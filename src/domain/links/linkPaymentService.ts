import { ApiError } from '../../errors';
import { findMethod } from '../payments/methods';
import { createPaymentIntent } from '../payments/paymentService';
import { toPublicPaymentView, type PublicPaymentView } from '../payments/paymentSerializer';
import { getPublicPaymentLink } from './paymentLinkService';
import type { EventSink } from '../events/outbox';

/** What a customer sends from a page: the method, and the mobile for express. */
export interface PublicPaymentInput {
  payment_method: string;
  customer?: { mobile?: string } | null;
}

/**
 * The method a page payment may use: one the link or session offers. A coming-soon code is
 * `method_disabled` (as everywhere); an active method the merchant did not offer is `invalid_request`.
 */
export function checkOfferedMethod(offered: readonly string[], code: string): void {
  const method = findMethod(code);
  if (method && method.status !== 'active') {
    throw new ApiError('method_disabled', `Payment method '${code}' is not available yet`);
  }
  if (!offered.includes(code)) {
    throw ApiError.invalid(`Invalid field 'payment_method': '${code}' is not offered here (offered: ${offered.join(', ')})`);
  }
}

/**
 * A payment on a link's page: an intent for the link's amount, made by nobody's key (`api_key_id`
 * null), tied to the link (`metadata.payment_link` = link id, set by the payments core from `via`).
 * Returns only the public view: the page must not learn the merchant's metadata or fees.
 */
export async function payPaymentLink(sink: EventSink, code: string, input: PublicPaymentInput): Promise<PublicPaymentView> {
  const link = await getPublicPaymentLink(code);
  checkOfferedMethod(link.methods, input.payment_method);
  const intent = await createPaymentIntent(
    sink,
    { accountId: link.account_id, apiKeyId: null },
    { amount: link.amount, currency: 'AOA', payment_method: input.payment_method, customer: input.customer ?? null },
    { via: { paymentLinkId: link._id } },
  );
  return toPublicPaymentView(intent);
}
