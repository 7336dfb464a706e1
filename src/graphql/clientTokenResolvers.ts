import type { ClientTokenGrant } from '../domain/clientTokens/clientTokenService';
import { requireGrantFor } from '../domain/clientTokens/clientTokenService';
import { getPaymentIntentForAccount } from '../domain/payments/paymentService';
import { toPublicPaymentView } from '../domain/payments/paymentSerializer';
import type { GraphQLContext } from './context';
import type { PaymentIntentModel, PaymentIntentUpdateModel } from './models';
import { paymentIntentUpdates } from './subscriptions/paymentIntentUpdates';

/**
 * What `paymentIntent(id)` and `paymentIntentUpdated(id)` resolve to for a client token: the public view
 * (the serializer of the pages and the public stream), never the full intent. clientTokenScope.ts has
 * already refused any selection beyond it, so the PaymentIntent resolvers only read the view's fields.
 */
const asModel = (view: ReturnType<typeof toPublicPaymentView>) => view as unknown as PaymentIntentModel;

export async function tokenPaymentIntent(grant: ClientTokenGrant, id: string): Promise<PaymentIntentModel> {
  requireGrantFor(grant, id);
  return asModel(toPublicPaymentView(await getPaymentIntentForAccount(grant.accountId, id)));
}

/**
 * The subscription for a token: public views, and it completes once the intent feed knows the payment's
 * outcome (final per the state table, and its follow-up event delivered: `payment.succeeded` after
 * `reference.paid`, `payment.reconciled` after UNKNOWN), as the public SSE stream closes: a frontend
 * waiting for the customer has nothing more to wait for. A key's subscription stays open for refunds.
 * The token's revocation or expiry ends it with the error `authentication_failed`.
 */
export async function tokenPaymentIntentUpdates(ctx: GraphQLContext, grant: ClientTokenGrant, id: string): Promise<AsyncIterableIterator<PaymentIntentUpdateModel>> {
  requireGrantFor(grant, id);
  const streams = ctx.clientTokenStreams;
  if (!streams) throw new Error("a client token's context carries its gateway's token streams");
  return asPublicViews(await paymentIntentUpdates(ctx, id, { untilOutcome: true, clientToken: { grant, streams } }));
}

/**
 * The source's updates as public views. Not an async generator: a generator's return() waits until it
 * next reaches a `yield`, and one suspended in `await source.next()` on a payment with nothing new
 * reaches none, so a client that left kept the source (its bus subscriber and intent feed) until the
 * payment next moved. Here return() reaches the source at once.
 */
function asPublicViews(source: AsyncIterableIterator<PaymentIntentUpdateModel>): AsyncIterableIterator<PaymentIntentUpdateModel> {
  const done = (): Promise<IteratorResult<PaymentIntentUpdateModel>> => Promise.resolve({ value: undefined, done: true });
  return {
    async next() {
      const result = await source.next();
      return result.done ? result : { done: false, value: { ...result.value, paymentIntent: asModel(toPublicPaymentView(result.value.paymentIntent)) } };
    },
    return: () => source.return?.() ?? done(),
    throw: (err?: unknown) => source.throw?.(err) ?? Promise.reject(err),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
