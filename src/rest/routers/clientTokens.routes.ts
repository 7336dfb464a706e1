import { createClientToken, deleteClientToken } from '../../domain/clientTokens/clientToken.service';
import { toDeletedClientToken } from '../../domain/clientTokens/clientToken.serializer';
import { getPaymentIntentForAccount } from '../../domain/payments/payment.service';
import { toPublicPaymentView } from '../../domain/payments/payment.serializer';
import { grantFor } from '../clientTokenAuth';
import { defineRoute } from '../defineRoute';

/**
 * Client tokens: the merchant's server mints one per payment (secret or restricted key), its frontend
 * reads that payment's public view with it. Not idempotent (each POST mints another token), like Stripe's
 * ephemeral keys.
 */
export const clientTokenRoutes = [
  defineRoute('createClientToken', { permission: 'payment_intents:read' }, async (ctx, { body }) => ({
    status: 201,
    body: await createClientToken(ctx.actor.accountId, body),
  })),
  defineRoute('deleteClientToken', { permission: 'payment_intents:read' }, async (ctx, { params }) => {
    await deleteClientToken(ctx.actor.accountId, params.id);
    return { status: 200, body: toDeletedClientToken(params.id) };
  }),
  // The one-shot read of a token's payment: the same public view as the pages and the public stream.
  defineRoute('getPublicPayment', { public: true, clientToken: true }, async (ctx, { params }) => {
    const grant = grantFor(ctx.clientToken, params.id);
    return { status: 200, body: toPublicPaymentView(await getPaymentIntentForAccount(grant.accountId, params.id)) };
  }),
];
