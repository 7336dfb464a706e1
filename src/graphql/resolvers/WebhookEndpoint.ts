import type {
  WebhookEndpointMode,
  DeletedWebhookEndpointResolvers,
  TestWebhookEventResolvers,
  WebhookEndpointResolvers,
} from '../../../generated/graphql/resolvers-types';
import { listDeliveries } from '../../domain/webhooks/deliveryService';
import { getWebhookChaos } from '../../domain/webhooks/chaosService';
import { requireOperation } from '../context';
import { eventTypeToRest, toEnumName } from '../enums';
import { pageSize } from '../limits';
import { toConnection } from '../pagination';
import { endpointSuccess, listEndpointDeliveriesPage } from '../../domain/webhooks/endpointDeliveries';
import { run } from '../input';
import { LIST_BOUNDS } from '../listBounds';

export const WebhookEndpoint: WebhookEndpointResolvers = {
  createdAt: (e) => e.created_at,
  mode: (e) => toEnumName<WebhookEndpointMode>(e.mode),
  pendingEvents: async (e, { first }, ctx) => (await run(ctx, 'listPendingWebhookEvents', { params: { id: e.id }, query: { limit: String(first ?? 20) } })).data,
  secret: (e) => e.secret ?? null,
  // Cut to the bound the cost limit counts on, whatever the delivery service returns.
  deliveries: async (e, { state }, ctx) => {
    requireOperation(ctx, 'listWebhookDeliveries');
    // A state filter is read for this endpoint alone (the loader batches the unfiltered lists).
    const list = state
      ? (await listDeliveries(ctx.actor.accountId, e.id, { state })).map((d) => ({ ...d, endpoint_id: e.id }))
      : await ctx.loaders.deliveriesByEndpoint.load(e.id);
    return list.slice(0, LIST_BOUNDS['WebhookEndpoint.deliveries']);
  },
  deliveriesConnection: async (e, { first, after, state, eventType }, ctx) => {
    requireOperation(ctx, 'listWebhookDeliveries');
    const size = pageSize('WebhookEndpoint.deliveriesConnection', first);
    const page = await listEndpointDeliveriesPage(ctx.actor.accountId, e.id, {
      limit: size + 1,
      startingAfter: after,
      state: state ?? null,
      eventType: eventType ? eventTypeToRest(eventType) : null,
    });
    return toConnection(page, size, after);
  },
  recentSuccess: (e, _a, ctx) => {
    requireOperation(ctx, 'listWebhookDeliveries');
    return endpointSuccess(ctx.actor.accountId, e.id);
  },
  // The settings come with the endpoint; the report is read only when chaos is on.
  chaos: (e, _a, ctx) => {
    if (!e.chaos) return null;
    requireOperation(ctx, 'getWebhookChaos');
    return getWebhookChaos(ctx.actor.accountId, e.id);
  },
};

export const DeletedWebhookEndpoint: DeletedWebhookEndpointResolvers = {};

export const TestWebhookEvent: TestWebhookEventResolvers = {
  eventId: (t) => t.event_id,
};
