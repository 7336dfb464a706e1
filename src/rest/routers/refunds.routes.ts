import { createRefund, getRefund } from '../../domain/refunds/refund.service';
import { defineRoute } from '../defineRoute';

export const refundRoutes = [
  defineRoute('createRefund', { permission: 'refunds:write', idempotent: true }, async (ctx, input) => ({
    status: 201,
    body: await createRefund(ctx.actor, input.body, ctx.idempotency),
  })),
  defineRoute('getRefund', { permission: 'refunds:read' }, async (ctx, input) => ({
    status: 200,
    body: await getRefund(ctx.actor, input.params.id),
  })),
];
