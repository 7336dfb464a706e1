import { getPaymentIntentForAccount } from '../../domain/payments/payment.service';
import { fullView, loadPublicStreamPayment, preparePaymentStream, publicView } from '../../realtime/paymentStream';
import { openSseStream } from '../../realtime/sse';
import { grantFor } from '../clientTokenAuth';
import { defineRoute } from '../defineRoute';

/**
 * Server-sent-event streams of a payment. Authentication, the rate limit (one count per connection)
 * the caps on open streams (per client IP, and per key) and the 404 checks happen before the first
 * byte; the handlers then write `ctx.res` themselves.
 */
export const streamRoutes = [
  defineRoute('streamPaymentIntentEvents', { permission: 'payment_intents:read' }, async (ctx, { params, headers }) => {
    const accountId = ctx.actor.accountId;
    await openSseStream(ctx.req, ctx.res, { ip: ctx.ip, keyId: ctx.actor.apiKeyId }, () =>
      preparePaymentStream(
        { accountId, paymentId: params.id, loadIntent: () => getPaymentIntentForAccount(accountId, params.id), view: fullView },
        headers['last-event-id'],
      ),
    );
  }),
  // With a client token: any payment of the account, the token's own (grantFor: 401 for another one).
  defineRoute('streamPublicPaymentEvents', { public: true, clientToken: true }, async (ctx, { params, headers }) => {
    const grant = ctx.clientToken && grantFor(ctx.clientToken, params.id);
    const { accountId } = grant ?? (await loadPublicStreamPayment(params.id));
    const loadIntent = grant
      ? () => getPaymentIntentForAccount(accountId, params.id)
      : async () => (await loadPublicStreamPayment(params.id)).intent;
    await openSseStream(ctx.req, ctx.res, { ip: ctx.ip, keyId: null }, () =>
      preparePaymentStream({ accountId, paymentId: params.id, loadIntent, view: publicView }, headers['last-event-id']),
    );
  }),
];
