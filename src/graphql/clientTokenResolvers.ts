import type { ClientTokenGrant } from '../domain/clientTokens/clientToken.service';
import { requireGrantFor } from '../domain/clientTokens/clientToken.service';
import { getPaymentIntentForAccount } from '../domain/payments/payment.service';
import { toPublicPaymentView } from '../domain/payments/payment.serializer';
import type { GraphQLContext } from './context';
import type { PaymentIntentModel, PaymentIntentUpdateModel } from './models';
import { paymentIntentUpdates } from './subscriptions/paymentIntentUpdates';

/**
 * What `paymentIntent(id)` and `paymentIntentUpdated(id)` resolve to for a client token: the public view
 * (the serializer of the pages and the public stream), never the full intent. clientTokenAuth.ts has
 * already refused any selection beyond it, so the PaymentIntent resolvers only read the view's fields.
 */
const asModel = (view: ReturnType<typeof toPublicPaymentView>) => view as unknown as PaymentIntentModel;

export async function tokenPaymentIntent(grant: ClientTokenGrant, id: string): Promise<PaymentIntentModel> {
  requireGrantFor(grant, id);
  return asModel(toPublicPaymentView(await getPaymentIntentForAccount(grant.accountId, id)));
}

const OPEN_STATUSES = new Set(['PENDING', 'PROCESSING', 'UNKNOWN']);

/**
 * The subscription for a token: public views, and it completes once the payment is final, as the
 * public SSE stream closes (a frontend waiting for the customer has nothing more to wait for): after
 * `payment.succeeded` when `reference.paid` announced it, after `payment.reconciled` when the payment
 * was UNKNOWN. A key's subscription stays open for refunds; a token's view is of the payment's outcome.
 */
export async function tokenPaymentIntentUpdates(ctx: GraphQLContext, grant: ClientTokenGrant, id: string): Promise<AsyncIterableIterator<PaymentIntentUpdateModel>> {
  requireGrantFor(grant, id);
  return untilFinal(await paymentIntentUpdates(ctx, id));
}

async function* untilFinal(source: AsyncIterableIterator<PaymentIntentUpdateModel>): AsyncGenerator<PaymentIntentUpdateModel> {
  let wasUnknown = false;
  try {
    for await (const update of source) {
      const status = update.paymentIntent.status;
      wasUnknown ||= status === 'UNKNOWN';
      yield { ...update, paymentIntent: asModel(toPublicPaymentView(update.paymentIntent)) };
      const awaitingFollowUp = update.eventType === 'reference.paid' || (wasUnknown && status === 'SUCCEEDED' && update.eventType !== 'payment.reconciled');
      if (!OPEN_STATUSES.has(status) && !awaitingFollowUp) return;
    }
  } finally {
    await source.return?.();
  }
}
