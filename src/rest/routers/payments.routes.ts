import { cancelPaymentIntent, createPaymentIntent, getPaymentIntent, listPaymentIntents } from '../../domain/payments/payment.service';
import { defineRoute } from '../defineRoute';

export const paymentRoutes = [
  defineRoute('createPaymentIntent', { permission: 'payment_intents:write', idempotent: true }, async (ctx, input) => ({
    status: 201,
    body: await createPaymentIntent(ctx.actor, input.body, { idempotency: ctx.idempotency }),
  })),
  defineRoute('listPaymentIntents', { permission: 'payment_intents:read' }, async (ctx, input) => ({
    status: 200,
    body: {
      object: 'list',
      data: await listPaymentIntents(ctx.actor, {
        limit: input.query.limit,
        status: input.query.status,
        startingAfter: input.query.starting_after,
      }),
    },
  })),
  defineRoute('getPaymentIntent', { permission: 'payment_intents:read' }, async (ctx, input) => ({
    status: 200,
    body: await getPaymentIntent(ctx.actor, input.params.id),
  })),
  defineRoute('cancelPaymentIntent', { permission: 'payment_intents:write' }, async (ctx, input) => ({
    status: 200,
    body: await cancelPaymentIntent(ctx.actor, input.params.id),
  })),
];
