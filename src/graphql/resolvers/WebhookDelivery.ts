import type { WebhookDeliveryResolvers, WebhookDeliveryState } from '../../../generated/graphql/resolvers-types';
import { eventTypeFromRest, toEnumName } from '../enums';
import { chaosKindName } from './WebhookChaos';
import { requireOperation } from '../context';

export const WebhookDelivery: WebhookDeliveryResolvers = {
  endpointId: (d) => d.endpoint_id,
  eventId: (d) => d.event_id,
  eventType: (d) => eventTypeFromRest(d.event_type),
  state: (d) => toEnumName<WebhookDeliveryState>(d.state),
  lastStatus: (d) => d.last_status,
  lastMs: (d) => d.last_ms,
  lastAttemptAt: (d) => d.last_attempt_at,
  lastError: (d) => d.last_error,
  nextAttemptAt: (d) => d.next_attempt_at,
  requestBody: (d) => d.request_body,
  signatureHeader: (d) => d.signature_header,
  chaos: (d) => chaosKindName(d.chaos),
  attemptLog: async (d, _a, ctx) => {
    requireOperation(ctx, 'listWebhookDeliveries');
    const kept = await ctx.loaders.deliveryAttempts.load(d.id);
    return (kept?.attempts ?? []).map((a) => ({ at: new Date(a.at).toISOString(), status: a.status, durationMs: a.ms, error: a.error ?? null }));
  },
  requestHeaders: async (d, _a, ctx) => {
    requireOperation(ctx, 'listWebhookDeliveries');
    const kept = await ctx.loaders.deliveryAttempts.load(d.id);
    return Object.entries(kept?.headers ?? {}).map(([name, value]) => ({ name, value }));
  },
};
