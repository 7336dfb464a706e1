import { DELIVERY_LIST_SIZE, listDeliveries, recoverDeliveries, retryDeliveryNow } from '../../domain/webhooks/deliveryService';
import { ackPendingEvents, listPendingEvents } from '../../domain/webhooks/pullEndpointService';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookEndpoints,
  rotateWebhookSecret,
  sendTestWebhook,
} from '../../domain/webhooks/webhookEndpointService';
import { clearWebhookChaos, getWebhookChaos, setWebhookChaos } from '../../domain/webhooks/chaosService';
import type { GraphQLHandlerTable } from '../graphqlOperations';
import { getEndpointDelivery } from '../../domain/webhooks/paymentDeliveries';
import type { HandlerTable } from '../types';
import { allOf, pageOf, withOneMore } from './listPage';

/** Webhook endpoints and their deliveries. */
export const webhookHandlers = {
  createWebhookEndpoint: async (ctx, { body }) => createWebhookEndpoint(ctx.actor.accountId, body, ctx.settings.webhookTargets),
  listWebhookEndpoints: async (ctx) => allOf(await listWebhookEndpoints(ctx.actor.accountId)),
  deleteWebhookEndpoint: async (ctx, { params }) => deleteWebhookEndpoint(ctx.actor.accountId, params.id),
  sendTestWebhook: async (ctx, { params }) => sendTestWebhook(ctx.runtime, ctx.actor.accountId, params.id),
  listWebhookDeliveries: async (ctx, { params }) =>
    pageOf(await listDeliveries(ctx.actor.accountId, params.id, { limit: withOneMore(DELIVERY_LIST_SIZE) }), DELIVERY_LIST_SIZE),
  retryWebhookDelivery: async (ctx, { params }) => retryDeliveryNow(ctx.runtime.deliveries, ctx.actor.accountId, params.id, params.delivery_id),
  rotateWebhookSecret: async (ctx, { params }) => rotateWebhookSecret(ctx.actor.accountId, params.id),
  getWebhookChaos: async (ctx, { params }) => getWebhookChaos(ctx.actor.accountId, params.id),
  setWebhookChaos: async (ctx, { params, body }) => setWebhookChaos(ctx.actor.accountId, params.id, body),
  clearWebhookChaos: async (ctx, { params }) => clearWebhookChaos(ctx.actor.accountId, params.id),
  listPendingWebhookEvents: async (ctx, { params, query }) => listPendingEvents(ctx.actor.accountId, params.id, query.limit ?? 20),
  ackPendingWebhookEvents: async (ctx, { params, body }) => ackPendingEvents(ctx.actor.accountId, params.id, body.ids),
  recoverWebhookDeliveries: async (ctx, { params, body }) => recoverDeliveries(ctx.runtime.deliveries, ctx.actor.accountId, params.id, new Date(body.since)),
} satisfies HandlerTable<
  | 'createWebhookEndpoint'
  | 'listWebhookEndpoints'
  | 'deleteWebhookEndpoint'
  | 'sendTestWebhook'
  | 'listWebhookDeliveries'
  | 'retryWebhookDelivery'
  | 'rotateWebhookSecret'
  | 'getWebhookChaos'
  | 'setWebhookChaos'
  | 'clearWebhookChaos'
  | 'listPendingWebhookEvents'
  | 'ackPendingWebhookEvents'
  | 'recoverWebhookDeliveries'
>;

/** One endpoint, and one delivery, read by id (graphqlOperations.ts). */
export const webhookGraphQLHandlers = {
  getWebhookEndpoint: async (ctx, { id }) => getWebhookEndpoint(ctx.actor.accountId, id),
  getWebhookDelivery: async (ctx, { id }) => getEndpointDelivery(ctx.actor.accountId, id),
} satisfies GraphQLHandlerTable<'getWebhookEndpoint' | 'getWebhookDelivery'>;
