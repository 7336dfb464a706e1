import type { SandboxResetResolvers } from '../../../generated/graphql/resolvers-types';
import { run } from '../input';

/** The counts of POST /sandbox/reset, and the clock read afterwards (REST's answer has no clock). */
export const SandboxReset: SandboxResetResolvers = {
  paymentIntents: (r) => r.deleted.payment_intents,
  refunds: (r) => r.deleted.refunds,
  events: (r) => r.deleted.events,
  webhookDeliveries: (r) => r.deleted.webhook_deliveries,
  paymentLinks: (r) => r.deleted.payment_links,
  checkoutSessions: (r) => r.deleted.checkout_sessions,
  logs: (r) => r.deleted.logs,
  clock: (_r, _a, ctx) => run(ctx, 'getSandboxClock'),
};
