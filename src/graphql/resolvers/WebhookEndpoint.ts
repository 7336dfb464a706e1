import type {
  DeletedWebhookEndpointResolvers,
  TestWebhookEventResolvers,
  WebhookEndpointResolvers,
} from '../../../generated/graphql/resolvers-types';
import { requireOperation } from '../context';
import { LIST_BOUNDS } from '../listBounds';

export const WebhookEndpoint: WebhookEndpointResolvers = {
  createdAt: (e) => e.created_at,
  secret: (e) => e.secret ?? null,
  // Cut to the bound the cost limit counts on, whatever the delivery service returns.
  deliveries: async (e, _a, ctx) => {
    requireOperation(ctx, 'listWebhookDeliveries');
    return (await ctx.loaders.deliveriesByEndpoint.load(e.id)).slice(0, LIST_BOUNDS['WebhookEndpoint.deliveries']);
  },
};

export const DeletedWebhookEndpoint: DeletedWebhookEndpointResolvers = {};

export const TestWebhookEvent: TestWebhookEventResolvers = {
  eventId: (t) => t.event_id,
};
