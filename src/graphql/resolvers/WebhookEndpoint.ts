import type {
  DeletedWebhookEndpointResolvers,
  TestWebhookEventResolvers,
  WebhookEndpointResolvers,
} from '../../../generated/graphql/resolvers-types';
import { requireOperation } from '../context';

export const WebhookEndpoint: WebhookEndpointResolvers = {
  createdAt: (e) => e.created_at,
  secret: (e) => e.secret ?? null,
  deliveries: (e, _a, ctx) => {
    requireOperation(ctx, 'listWebhookDeliveries');
    return ctx.loaders.deliveriesByEndpoint.load(e.id);
  },
};

export const DeletedWebhookEndpoint: DeletedWebhookEndpointResolvers = {};

export const TestWebhookEvent: TestWebhookEventResolvers = {
  eventId: (t) => t.event_id,
};
