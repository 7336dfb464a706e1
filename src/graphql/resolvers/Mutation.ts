import type { MutationResolvers } from '../../../generated/graphql/resolvers-types';
import { methodToRest, permissionToRest } from '../enums';
import { idempotent, restBody, run } from '../input';

/**
 * One mutation per REST write: its arguments become that operation's input (the JSON body, the path ids,
 * the Idempotency-Key), and operations/execute runs it as it runs the REST route: the same permission,
 * validation, service and resource.
 */
export const Mutation: MutationResolvers = {
  // Public, like POST /sandbox/accounts: no key needed, and each call was counted in the client IP's
  // account-creation bucket before the operation ran (http.ts / server.ts / ws.ts).
  createSandboxAccount: (_p, { input }, ctx) => run(ctx, 'createSandboxAccount', { body: restBody({ name: input?.name, email: input?.email }) }),
  createPaymentIntent: (_p, { input, idempotencyKey }, ctx) =>
    run(
      ctx,
      'createPaymentIntent',
      idempotent(
        idempotencyKey,
        restBody({
          amount: input.amount,
          currency: input.currency,
          payment_method: methodToRest(input.paymentMethod),
          customer: input.customer ? { mobile: input.customer.mobile } : undefined,
          merchant_reference: input.merchantReference,
          metadata: input.metadata,
        }),
      ),
    ),
  cancelPaymentIntent: (_p, { id }, ctx) => run(ctx, 'cancelPaymentIntent', { params: { id } }),
  createRefund: (_p, { input, idempotencyKey }, ctx) =>
    run(ctx, 'createRefund', idempotent(idempotencyKey, restBody({ payment_intent: input.paymentIntent, amount: input.amount }))),
  createPaymentLink: (_p, { input }, ctx) =>
    run(ctx, 'createPaymentLink', { body: restBody({ amount: input.amount, description: input.description, methods: input.methods?.map(methodToRest) }) }),
  deactivatePaymentLink: (_p, { id }, ctx) => run(ctx, 'deactivatePaymentLink', { params: { id } }),
  createQrCode: (_p, { input }, ctx) =>
    run(ctx, 'createQrCode', { body: restBody({ amount: input.amount, description: input.description, payment_link: input.paymentLink }) }),
  createCheckoutSession: (_p, { input }, ctx) =>
    run(ctx, 'createCheckoutSession', {
      body: restBody({
        amount: input.amount,
        merchant_reference: input.merchantReference,
        success_url: input.successUrl,
        cancel_url: input.cancelUrl,
        methods: input.methods?.map(methodToRest),
      }),
    }),
  createWebhookEndpoint: (_p, { input }, ctx) =>
    run(ctx, 'createWebhookEndpoint', {
      body: restBody({ url: input.url, mode: input.mode?.toLowerCase(), events: input.events, name: input.name, description: input.description }),
    }),
  deleteWebhookEndpoint: (_p, { id }, ctx) => run(ctx, 'deleteWebhookEndpoint', { params: { id } }),
  sendTestWebhook: (_p, { id }, ctx) => run(ctx, 'sendTestWebhook', { params: { id } }),
  retryWebhookDelivery: async (_p, { endpointId, deliveryId }, ctx) => ({
    ...(await run(ctx, 'retryWebhookDelivery', { params: { id: endpointId, delivery_id: deliveryId } })),
    endpoint_id: endpointId,
  }),
  rotateWebhookSecret: (_p, { id }, ctx) => run(ctx, 'rotateWebhookSecret', { params: { id } }),
  setWebhookChaos: (_p, { id, input }, ctx) =>
    run(ctx, 'setWebhookChaos', {
      params: { id },
      body: restBody({
        duplicate: input.duplicate,
        reorder: input.reorder,
        bad_signature: input.badSignature,
        stale_timestamp: input.staleTimestamp,
        delay_ms: input.delayMs ? { min: input.delayMs.min, max: input.delayMs.max } : undefined,
        seed: input.seed,
      }),
    }),
  clearWebhookChaos: (_p, { id }, ctx) => run(ctx, 'clearWebhookChaos', { params: { id } }),
  acknowledgeWebhookEvents: (_p, { endpointId, ids }, ctx) => run(ctx, 'ackPendingWebhookEvents', { params: { id: endpointId }, body: { ids } }),
  recoverWebhookDeliveries: (_p, { endpointId, since }, ctx) => run(ctx, 'recoverWebhookDeliveries', { params: { id: endpointId }, body: { since } }),
  simulateReferencePaid: (_p, { input }, ctx) => run(ctx, 'simulateReferencePaid', { body: restBody({ reference: input.reference }) }),
  advanceSandboxClock: (_p, { input }, ctx) => run(ctx, 'advanceSandboxClock', { body: restBody({ seconds: input.seconds }) }),
  resetSandbox: (_p, _a, ctx) => run(ctx, 'resetSandbox'),
  createApiKey: (_p, { input }, ctx) =>
    run(ctx, 'createApiKey', { body: restBody({ name: input.name, permissions: input.permissions.map(permissionToRest) }) }),
  revokeApiKey: (_p, { id }, ctx) => run(ctx, 'revokeApiKey', { params: { id } }),
};
