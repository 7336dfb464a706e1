import {
  createPaymentLink,
  deactivatePaymentLink,
  getPaymentLink,
  listPaymentLinks,
} from '../../domain/links/paymentLink.service';
import { toPaymentLinkResource } from '../../domain/links/paymentLink.serializer';
import { publicBaseUrl } from '../../domain/links/publicUrls';
import { createQrCode, paymentLinkQrSvg } from '../../domain/qr/qr.service';
import { defineRoute } from '../defineRoute';

export const linkRoutes = [
  defineRoute('createPaymentLink', { permission: 'payment_links:write' }, async (ctx, { body }) => ({
    status: 201,
    body: toPaymentLinkResource(await createPaymentLink(ctx.actor.accountId, body), publicBaseUrl()),
  })),
  defineRoute('listPaymentLinks', { permission: 'payment_links:read' }, async (ctx) => {
    const base = publicBaseUrl();
    const links = await listPaymentLinks(ctx.actor.accountId);
    return { status: 200, body: { object: 'list', data: links.map((l) => toPaymentLinkResource(l, base)) } };
  }),
  defineRoute('getPaymentLink', { permission: 'payment_links:read' }, async (ctx, { params }) => ({
    status: 200,
    body: toPaymentLinkResource(await getPaymentLink(ctx.actor.accountId, params.id), publicBaseUrl()),
  })),
  defineRoute('deactivatePaymentLink', { permission: 'payment_links:write' }, async (ctx, { params }) => ({
    status: 200,
    body: toPaymentLinkResource(await deactivatePaymentLink(ctx.actor.accountId, params.id), publicBaseUrl()),
  })),
  defineRoute('getPaymentLinkQr', { permission: 'payment_links:read' }, async (ctx, { params }) => ({
    status: 200,
    contentType: 'image/svg+xml',
    body: await paymentLinkQrSvg(ctx.actor.accountId, params.id, publicBaseUrl()),
  })),
  defineRoute('createQrCode', { permission: 'payment_links:write' }, async (ctx, { body }) => ({
    status: 201,
    body: await createQrCode(ctx.actor.accountId, body, publicBaseUrl()),
  })),
];
