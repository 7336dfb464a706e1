import { ApiError } from '../../errors';
import { checkOfferedMethod, type PublicPaymentInput } from '../links/linkPayment.service';
import { PaymentModel } from '../payments/payment.model';
import { createPaymentIntent } from '../payments/payment.service';
import { toPublicPaymentView, type PublicPaymentView } from '../payments/payment.serializer';
import { PAID_STATUSES } from '../payments/payment.states';
import { getPublicCheckoutSession } from './checkoutSession.service';

/**
 * A payment on a checkout page. Only an OPEN session can be paid (409 `payment_already_processed`
 * otherwise). A session stays OPEN for the moment between its payment succeeding and the completion
 * hook running, so a paid payment of the session also closes it to new ones: one session, one charge.
 * The intent carries the session's `merchant_reference` (so every payment.* event does) and
 * `metadata.checkout_session` = the session id (set by the payments core from `via`).
 */
export async function payCheckoutSession(id: string, input: PublicPaymentInput): Promise<PublicPaymentView> {
  const session = await getPublicCheckoutSession(id);
  if (session.status !== 'OPEN') {
    throw ApiError.alreadyProcessed(`This checkout session is ${session.status} and can no longer be paid`);
  }
  checkOfferedMethod(session.methods, input.payment_method);
  const paid = await PaymentModel.exists({ account_id: session.account_id, status: { $in: PAID_STATUSES }, checkout_session_id: id });
  if (paid) throw ApiError.alreadyProcessed('This checkout session has already been paid');
  const intent = await createPaymentIntent(
    { accountId: session.account_id, apiKeyId: null },
    {
      amount: session.amount,
      currency: 'AOA',
      payment_method: input.payment_method,
      customer: input.customer ?? null,
      merchant_reference: session.merchant_reference,
    },
    { via: { checkoutSessionId: session._id } },
  );
  return toPublicPaymentView(intent);
}
