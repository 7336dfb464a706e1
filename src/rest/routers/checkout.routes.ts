import { createCheckoutSession, getCheckoutSession } from '../../domain/checkout/checkoutSession.service';
import { toCheckoutSessionResource } from '../../domain/checkout/checkoutSession.serializer';
import { publicBaseUrl } from '../../domain/links/publicUrls';
import { defineRoute } from '../defineRoute';

export const checkoutRoutes = [
  defineRoute('createCheckoutSession', { permission: 'checkout_sessions:write' }, async (ctx, { body }) => ({
    status: 201,
    body: toCheckoutSessionResource(await createCheckoutSession(ctx.actor.accountId, body), publicBaseUrl()),
  })),
  defineRoute('getCheckoutSession', { permission: 'checkout_sessions:read' }, async (ctx, { params }) => ({
    status: 200,
    body: toCheckoutSessionResource(await getCheckoutSession(ctx.actor.accountId, params.id), publicBaseUrl()),
  })),
];
