import { DELIVERY_LIST_SIZE, listDeliveries, retryDeliveryNow } from '../../domain/webhooks/delivery.service';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listWebhookEndpoints,
  rotateWebhookSecret,
  sendTestWebhook,
} from '../../domain/webhooks/webhookEndpoint.service';
import { clearWebhookChaos, getWebhookChaos, setWebhookChaos } from '../../domain/webhooks/chaos.service';
import type { HandlerTable } from '../types';
import { allOf, pageOf, withOneMore } from './listPage';

/** Webhook endpoints and their deliveries. */
export const webhookHandlers = {
  createWebhookEndpoint: async (ctx, { body }) => createWebhookEndpoint(ctx.actor.accountId, body, ctx.settings.webhookTargets),
  listWebhookEndpoints: async (ctx) => allOf(await listWebhookEndpoints(ctx.actor.accountId)),
  deleteWebhookEndpoint: async (ctx, { params }) => deleteWebhookEndpoint(ctx.actor.accountId, params.id),
  sendTestWebhook: async (ctx, { params }) => sendTestWebhook(ctx.actor.accountId, params.id),
  listWebhookDeliveries: async (ctx, { params }) =>
    pageOf(await listDeliveries(ctx.actor.accountId, params.id, { limit: withOneMore(DELIVERY_LIST_SIZE) }), DELIVERY_LIST_SIZE),
  retryWebhookDelivery: async (ctx, { params }) => retryDeliveryNow(ctx.actor.accountId, params.id, params.delivery_id, ctx.settings.webhookTargets),
  rotateWebhookSecret: async (ctx, { params }) => rotateWebhookSecret(ctx.actor.accountId, params.id),
  getWebhookChaos: async (ctx, { params }) => getWebhookChaos(ctx.actor.accountId, params.id),
  setWebhookChaos: async (ctx, { params, body }) => setWebhookChaos(ctx.actor.accountId, params.id, body),
  clearWebhookChaos: async (ctx, { params }) => clearWebhookChaos(ctx.actor.accountId, params.id),
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
>;
