import { payCheckoutSession } from '../../domain/checkout/checkoutPaymentService';
import { toCheckoutSessionResource, toPublicCheckoutSession } from '../../domain/checkout/checkoutSessionSerializer';
import { createCheckoutSession, getCheckoutSession, getPublicCheckoutSession, listCheckoutSessions } from '../../domain/checkout/checkoutSessionService';
import { payPaymentLink } from '../../domain/links/linkPaymentService';
import { toPaymentLinkResource, toPublicPaymentLink } from '../../domain/links/paymentLinkSerializer';
import {
  createPaymentLink,
  deactivatePaymentLink,
  getPaymentLink,
  getPublicPaymentLink,
  LINK_LIST_SIZE,
  listPaymentLinks,
} from '../../domain/links/paymentLinkService';
import { createQrCode, paymentLinkQrSvg } from '../../domain/qr/qrService';
import type { GraphQLHandlerTable } from '../graphqlOperations';
import type { HandlerTable } from '../types';
import { pageOf, withOneMore } from './listPage';

/**
 * Payment links, QR codes and checkout sessions, and the JSON behind their pages (the public operations:
 * no credentials, limited per client IP, public views only: no account, merchant reference, customer,
 * metadata or fees).
 */
export const linkHandlers = {
  createPaymentLink: async (ctx, { body }) => toPaymentLinkResource(await createPaymentLink(ctx.actor.accountId, body), ctx.settings.publicBaseUrl),
  listPaymentLinks: async (ctx) => {
    const links = await listPaymentLinks(ctx.actor.accountId, withOneMore(LINK_LIST_SIZE));
    return pageOf(links.map((l) => toPaymentLinkResource(l, ctx.settings.publicBaseUrl)), LINK_LIST_SIZE);
  },
  getPaymentLink: async (ctx, { params }) => toPaymentLinkResource(await getPaymentLink(ctx.actor.accountId, params.id), ctx.settings.publicBaseUrl),
  deactivatePaymentLink: async (ctx, { params }) => toPaymentLinkResource(await deactivatePaymentLink(ctx.actor.accountId, params.id), ctx.settings.publicBaseUrl),
  // The contract's answer is image/svg+xml: execute sends the text as it is.
  getPaymentLinkQr: async (ctx, { params }) => paymentLinkQrSvg(ctx.actor.accountId, params.id, ctx.settings.publicBaseUrl),
  createQrCode: async (ctx, { body }) => createQrCode(ctx.actor.accountId, body, ctx.settings.publicBaseUrl),
  createCheckoutSession: async (ctx, { body }) => toCheckoutSessionResource(await createCheckoutSession(ctx.actor.accountId, body), ctx.settings.publicBaseUrl),
  getCheckoutSession: async (ctx, { params }) => toCheckoutSessionResource(await getCheckoutSession(ctx.actor.accountId, params.id), ctx.settings.publicBaseUrl),
  getPublicPaymentLink: async (ctx, { params }) => toPublicPaymentLink(await getPublicPaymentLink(params.code), ctx.settings.publicBaseUrl),
  createPublicPaymentLinkPayment: async (ctx, { params, body }) => payPaymentLink(ctx.runtime, params.code, body),
  getPublicCheckoutSession: async (ctx, { params }) => toPublicCheckoutSession(await getPublicCheckoutSession(params.id), ctx.settings.publicBaseUrl),
  createPublicCheckoutSessionPayment: async (ctx, { params, body }) => payCheckoutSession(ctx.runtime, params.id, body),
} satisfies HandlerTable<
  | 'createPaymentLink'
  | 'listPaymentLinks'
  | 'getPaymentLink'
  | 'deactivatePaymentLink'
  | 'getPaymentLinkQr'
  | 'createQrCode'
  | 'createCheckoutSession'
  | 'getCheckoutSession'
  | 'getPublicPaymentLink'
  | 'createPublicPaymentLinkPayment'
  | 'getPublicCheckoutSession'
  | 'createPublicCheckoutSessionPayment'
>;

/** The dashboard's list of checkout sessions (graphqlOperations.ts). */
export const linkGraphQLHandlers = {
  listCheckoutSessions: async (ctx, { limit, status, startingAfter }) =>
    (await listCheckoutSessions(ctx.actor.accountId, { limit, status, startingAfter })).map((s) => toCheckoutSessionResource(s, ctx.settings.publicBaseUrl)),
} satisfies GraphQLHandlerTable<'listCheckoutSessions'>;
