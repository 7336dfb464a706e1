import type { WebhookChaosKind, WebhookChaosReportResolvers, WebhookChaosResolvers } from '../../../generated/graphql/resolvers-types';
import { toEnumName } from '../enums';

export const WebhookChaos: WebhookChaosResolvers = {
  endpointId: (c) => c.endpoint,
  badSignature: (c) => c.bad_signature,
  staleTimestamp: (c) => c.stale_timestamp,
  delayMs: (c) => c.delay_ms,
};

export const WebhookChaosReport: WebhookChaosReportResolvers = {
  forgedSent: (r) => r.forged_sent,
  forgedRejected: (r) => r.forged_rejected,
  forgedAccepted: (r) => r.forged_accepted,
  duplicatesSent: (r) => r.duplicates_sent,
};

/** A delivery's REST `chaos` kind as the GraphQL enum (`bad_signature` → `BAD_SIGNATURE`). */
export const chaosKindName = (kind: string | null): WebhookChaosKind | null => (kind ? toEnumName<WebhookChaosKind>(kind) : null);
