import { payCheckoutSession } from '../../domain/checkout/checkoutPayment.service';
import { getPublicCheckoutSession } from '../../domain/checkout/checkoutSession.service';
import { toPublicCheckoutSession } from '../../domain/checkout/checkoutSession.serializer';
import { payPaymentLink } from '../../domain/links/linkPayment.service';
import { getPublicPaymentLink } from '../../domain/links/paymentLink.service';
import { toPublicPaymentLink } from '../../domain/links/paymentLink.serializer';
import { publicBaseUrl } from '../../domain/links/publicUrls';
import { defineRoute } from '../defineRoute';

/**
 * The JSON behind the payment-link and checkout pages: no credentials, limited per client IP. They
 * expose only public views (no account, merchant reference, customer, metadata or fees).
 */
export const publicRoutes = [
  defineRoute('getPublicPaymentLink', { public: true }, async (_ctx, { params }) => ({
    status: 200,
    body: toPublicPaymentLink(await getPublicPaymentLink(params.code), publicBaseUrl()),
  })),
  defineRoute('createPublicPaymentLinkPayment', { public: true }, async (_ctx, { params, body }) => ({
    status: 201,
    body: await payPaymentLink(params.code, body),
  })),
  defineRoute('getPublicCheckoutSession', { public: true }, async (_ctx, { params }) => ({
    status: 200,
    body: toPublicCheckoutSession(await getPublicCheckoutSession(params.id), publicBaseUrl()),
  })),
  defineRoute('createPublicCheckoutSessionPayment', { public: true }, async (_ctx, { params, body }) => ({
    status: 201,
    body: await payCheckoutSession(params.id, body),
  })),
];
