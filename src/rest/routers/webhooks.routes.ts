import { listDeliveries, retryDeliveryNow } from '../../domain/webhooks/delivery.service';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listWebhookEndpoints,
  rotateWebhookSecret,
  sendTestWebhook,
} from '../../domain/webhooks/webhookEndpoint.service';
import { defineRoute } from '../defineRoute';

export const webhookRoutes = [
  defineRoute('createWebhookEndpoint', { permission: 'webhook_endpoints:write' }, async (ctx, { body }) => ({
    status: 201,
    body: await createWebhookEndpoint(ctx.actor.accountId, body),
  })),
  defineRoute('listWebhookEndpoints', { permission: 'webhook_endpoints:read' }, async (ctx) => ({
    status: 200,
    body: { object: 'list', data: await listWebhookEndpoints(ctx.actor.accountId) },
  })),
  defineRoute('deleteWebhookEndpoint', { permission: 'webhook_endpoints:write' }, async (ctx, { params }) => ({
    status: 200,
    body: await deleteWebhookEndpoint(ctx.actor.accountId, params.id),
  })),
  defineRoute('sendTestWebhook', { permission: 'webhook_endpoints:write' }, async (ctx, { params }) => ({
    status: 202,
    body: await sendTestWebhook(ctx.actor.accountId, params.id),
  })),
  defineRoute('listWebhookDeliveries', { permission: 'webhook_endpoints:read' }, async (ctx, { params }) => ({
    status: 200,
    body: { object: 'list', data: await listDeliveries(ctx.actor.accountId, params.id) },
  })),
  defineRoute('retryWebhookDelivery', { permission: 'webhook_endpoints:write' }, async (ctx, { params }) => ({
    status: 200,
    body: await retryDeliveryNow(ctx.actor.accountId, params.id, params.delivery_id),
  })),
  defineRoute('rotateWebhookSecret', { permission: 'webhook_endpoints:write' }, async (ctx, { params }) => ({
    status: 200,
    body: await rotateWebhookSecret(ctx.actor.accountId, params.id),
  })),
];
