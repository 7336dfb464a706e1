import { createSandboxAccount } from '../../domain/accounts/account.service';
import { createRestrictedKey, revokeApiKey, toApiKeyResource } from '../../domain/accounts/apiKey.service';
import { toCheckoutSessionResource } from '../../domain/checkout/checkoutSession.serializer';
import { createCheckoutSession } from '../../domain/checkout/checkoutSession.service';
import { toPaymentLinkResource } from '../../domain/links/paymentLink.serializer';
import { createPaymentLink, deactivatePaymentLink } from '../../domain/links/paymentLink.service';
import { publicBaseUrl } from '../../domain/links/publicUrls';
import { cancelPaymentIntent, createPaymentIntent } from '../../domain/payments/payment.service';
import { simulateReferencePaid } from '../../domain/payments/reference';
import { createQrCode } from '../../domain/qr/qr.service';
import { createRefund } from '../../domain/refunds/refund.service';
import { advanceSandboxClock } from '../../domain/sandbox/sandboxClock.service';
import { retryDeliveryNow } from '../../domain/webhooks/delivery.service';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  rotateWebhookSecret,
  sendTestWebhook,
} from '../../domain/webhooks/webhookEndpoint.service';
import type { MutationResolvers } from '../../../generated/graphql/resolvers-types';
import { requireOperation } from '../context';
import { methodToRest, permissionToRest } from '../enums';
import { runIdempotentMutation } from '../idempotency';
import { restBody, validateBody } from '../input';

/**
 * One mutation per REST write. Each: the REST operation's permission, the input as that operation's
 * JSON body (validated by its generated validator), the same service call, the same resource back.
 */
export const Mutation: MutationResolvers = {
  // Public, like POST /sandbox/accounts: no key needed, and each call was counted in the client IP's
  // account-creation bucket before the operation ran (http.ts / server.ts / ws.ts).
  createSandboxAccount: (_p, { input }, ctx) => {
    requireOperation(ctx, 'createSandboxAccount');
    const body = validateBody<{ name?: string; email?: string }>('createSandboxAccount', restBody({ name: input?.name, email: input?.email }));
    return createSandboxAccount(body);
  },
  createPaymentIntent: (_p, { input, idempotencyKey }, ctx) => {
    requireOperation(ctx, 'createPaymentIntent');
    const body = restBody({
      amount: input.amount,
      currency: input.currency,
      payment_method: methodToRest(input.paymentMethod),
      customer: input.customer ? { mobile: input.customer.mobile } : undefined,
      merchant_reference: input.merchantReference,
      metadata: input.metadata,
    });
    return runIdempotentMutation(ctx, 'createPaymentIntent', idempotencyKey, body, (valid, attempt) => createPaymentIntent(ctx.actor, valid, { idempotency: attempt }));
  },
  cancelPaymentIntent: (_p, { id }, ctx) => {
    requireOperation(ctx, 'cancelPaymentIntent');
    return cancelPaymentIntent(ctx.actor, id);
  },
  createRefund: (_p, { input, idempotencyKey }, ctx) => {
    requireOperation(ctx, 'createRefund');
    const body = restBody({ payment_intent: input.paymentIntent, amount: input.amount });
    return runIdempotentMutation(ctx, 'createRefund', idempotencyKey, body, (valid, attempt) => createRefund(ctx.actor, valid, attempt));
  },
  createPaymentLink: async (_p, { input }, ctx) => {
    requireOperation(ctx, 'createPaymentLink');
    const body = validateBody<any>(
      'createPaymentLink',
      restBody({ amount: input.amount, description: input.description, methods: input.methods?.map(methodToRest) }),
    );
    return toPaymentLinkResource(await createPaymentLink(ctx.actor.accountId, body), publicBaseUrl());
  },
  deactivatePaymentLink: async (_p, { id }, ctx) => {
    requireOperation(ctx, 'deactivatePaymentLink');
    return toPaymentLinkResource(await deactivatePaymentLink(ctx.actor.accountId, id), publicBaseUrl());
  },
  createQrCode: (_p, { input }, ctx) => {
    requireOperation(ctx, 'createQrCode');
    const body = validateBody<any>(
      'createQrCode',
      restBody({ amount: input.amount, description: input.description, payment_link: input.paymentLink }),
    );
    return createQrCode(ctx.actor.accountId, body, publicBaseUrl());
  },
  createCheckoutSession: async (_p, { input }, ctx) => {
    requireOperation(ctx, 'createCheckoutSession');
    const body = validateBody<any>(
      'createCheckoutSession',
      restBody({
        amount: input.amount,
        merchant_reference: input.merchantReference,
        success_url: input.successUrl,
        cancel_url: input.cancelUrl,
        methods: input.methods?.map(methodToRest),
      }),
    );
    return toCheckoutSessionResource(await createCheckoutSession(ctx.actor.accountId, body), publicBaseUrl());
  },
  createWebhookEndpoint: (_p, { input }, ctx) => {
    requireOperation(ctx, 'createWebhookEndpoint');
    const body = validateBody<any>(
      'createWebhookEndpoint',
      restBody({ url: input.url, events: input.events, name: input.name, description: input.description }),
    );
    return createWebhookEndpoint(ctx.actor.accountId, body);
  },
  deleteWebhookEndpoint: (_p, { id }, ctx) => {
    requireOperation(ctx, 'deleteWebhookEndpoint');
    return deleteWebhookEndpoint(ctx.actor.accountId, id);
  },
  sendTestWebhook: (_p, { id }, ctx) => {
    requireOperation(ctx, 'sendTestWebhook');
    return sendTestWebhook(ctx.actor.accountId, id);
  },
  retryWebhookDelivery: async (_p, { endpointId, deliveryId }, ctx) => {
    requireOperation(ctx, 'retryWebhookDelivery');
    return { ...(await retryDeliveryNow(ctx.actor.accountId, endpointId, deliveryId)), endpoint_id: endpointId };
  },
  rotateWebhookSecret: (_p, { id }, ctx) => {
    requireOperation(ctx, 'rotateWebhookSecret');
    return rotateWebhookSecret(ctx.actor.accountId, id);
  },
  simulateReferencePaid: (_p, { input }, ctx) => {
    requireOperation(ctx, 'simulateReferencePaid');
    const body = validateBody<{ reference: string }>('simulateReferencePaid', restBody({ reference: input.reference }));
    return simulateReferencePaid(ctx.actor, body.reference);
  },
  advanceSandboxClock: (_p, { input }, ctx) => {
    requireOperation(ctx, 'advanceSandboxClock');
    const body = validateBody<{ seconds: number }>('advanceSandboxClock', restBody({ seconds: input.seconds }));
    return advanceSandboxClock(ctx.actor, body.seconds);
  },
  createApiKey: (_p, { input }, ctx) => {
    requireOperation(ctx, 'createApiKey');
    const body = validateBody<{ name: string; permissions: string[] }>(
      'createApiKey',
      restBody({ name: input.name, permissions: input.permissions.map(permissionToRest) }),
    );
    return createRestrictedKey(ctx.actor.accountId, body);
  },
  revokeApiKey: async (_p, { id }, ctx) => {
    requireOperation(ctx, 'revokeApiKey');
    return toApiKeyResource(await revokeApiKey(ctx.actor.accountId, id));
  },
};
