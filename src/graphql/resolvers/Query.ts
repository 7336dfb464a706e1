import { getAccount, toAccountResource } from '../../domain/accounts/account.service';
import { listApiKeys, toApiKeyResource } from '../../domain/accounts/apiKey.service';
import { toCheckoutSessionResource } from '../../domain/checkout/checkoutSession.serializer';
import { getCheckoutSession } from '../../domain/checkout/checkoutSession.service';
import { listEvents } from '../../domain/events/event.service';
import { toPaymentLinkResource } from '../../domain/links/paymentLink.serializer';
import { getPaymentLink, listPaymentLinks } from '../../domain/links/paymentLink.service';
import { publicBaseUrl } from '../../domain/links/publicUrls';
import { listRequestLogs, toLogEntryResource } from '../../domain/logs/requestLog.service';
import { PAYMENT_METHODS } from '../../domain/payments/methods';
import { getPaymentIntent, listPaymentIntents } from '../../domain/payments/payment.service';
import { getRefund } from '../../domain/refunds/refund.service';
import { getSandboxClock } from '../../domain/sandbox/sandboxClock.service';
import { getWebhookEndpoint, listWebhookEndpoints } from '../../domain/webhooks/webhookEndpoint.service';
import type { QueryResolvers } from '../../../generated/graphql/resolvers-types';
import { tokenPaymentIntent } from '../clientTokenResolvers';
import { requireOperation } from '../context';
import { eventTypeToRest } from '../enums';
import { pageSize } from '../limits';
import { LIST_BOUNDS } from '../listBounds';
import { toConnection } from '../pagination';

/** Each field: the permission of the REST operation it mirrors, then that operation's service call. */
export const Query: QueryResolvers = {
  account: async (_p, _a, ctx) => {
    requireOperation(ctx, 'getAccount');
    return toAccountResource(await getAccount(ctx.actor.accountId));
  },
  paymentMethods: (_p, _a, ctx) => {
    requireOperation(ctx, 'listPaymentMethods');
    return [...PAYMENT_METHODS];
  },
  paymentIntent: (_p, { id }, ctx) => {
    if (ctx.clientToken) return tokenPaymentIntent(ctx.clientToken, id);
    requireOperation(ctx, 'getPaymentIntent');
    return getPaymentIntent(ctx.actor, id);
  },
  paymentIntents: async (_p, { first, after, status }, ctx) => {
    requireOperation(ctx, 'listPaymentIntents');
    const n = pageSize('Query.paymentIntents', first);
    const fetched = await listPaymentIntents(ctx.actor, { limit: n + 1, status: status ?? undefined, startingAfter: after ?? undefined });
    return toConnection(fetched, n, after);
  },
  refund: (_p, { id }, ctx) => {
    requireOperation(ctx, 'getRefund');
    return getRefund(ctx.actor, id);
  },
  paymentLink: async (_p, { id }, ctx) => {
    requireOperation(ctx, 'getPaymentLink');
    return toPaymentLinkResource(await getPaymentLink(ctx.actor.accountId, id), publicBaseUrl());
  },
  paymentLinks: async (_p, _a, ctx) => {
    requireOperation(ctx, 'listPaymentLinks');
    const base = publicBaseUrl();
    return (await listPaymentLinks(ctx.actor.accountId)).map((l) => toPaymentLinkResource(l, base));
  },
  checkoutSession: async (_p, { id }, ctx) => {
    requireOperation(ctx, 'getCheckoutSession');
    return toCheckoutSessionResource(await getCheckoutSession(ctx.actor.accountId, id), publicBaseUrl());
  },
  // At most ACCOUNT_CAPS.webhookEndpoints exist; the cut keeps the answer to the bound the cost counts on.
  webhookEndpoints: async (_p, _a, ctx) => {
    requireOperation(ctx, 'listWebhookEndpoints');
    return (await listWebhookEndpoints(ctx.actor.accountId)).slice(0, LIST_BOUNDS['Query.webhookEndpoints']);
  },
  // REST has no GET /webhook_endpoints/{id}: one endpoint is read with the permission of the list.
  webhookEndpoint: (_p, { id }, ctx) => {
    requireOperation(ctx, 'listWebhookEndpoints');
    return getWebhookEndpoint(ctx.actor.accountId, id);
  },
  events: async (_p, { first, after, type }, ctx) => {
    requireOperation(ctx, 'listEvents');
    const n = pageSize('Query.events', first);
    const fetched = await listEvents(ctx.actor.accountId, {
      limit: n + 1,
      type: type ? eventTypeToRest(type) : undefined,
      startingAfter: after ?? undefined,
    });
    return toConnection(fetched, n, after);
  },
  logs: async (_p, { first }, ctx) => {
    requireOperation(ctx, 'listLogs');
    return (await listRequestLogs(ctx.key, pageSize('Query.logs', first))).map(toLogEntryResource);
  },
  apiKeys: async (_p, _a, ctx) => {
    requireOperation(ctx, 'listApiKeys');
    return (await listApiKeys(ctx.actor.accountId)).map(toApiKeyResource);
  },
  sandboxClock: (_p, _a, ctx) => {
    requireOperation(ctx, 'getSandboxClock');
    return getSandboxClock(ctx.actor);
  },
};
