import type { RouteDefinition } from './defineRoute';
import type { OperationId } from './generatedContract';
import type { PublicBucket } from './rateLimit';
import { accountRoutes } from './routers/accounts.routes';
import { apiKeyRoutes } from './routers/apiKeys.routes';
import { logRoutes } from './routers/logs.routes';
import { paymentMethodRoutes } from './routers/paymentMethods.routes';
import { paymentRoutes } from './routers/payments.routes';
import { refundRoutes } from './routers/refunds.routes';
import { eventRoutes } from './routers/events.routes';
import { sandboxRoutes } from './routers/sandbox.routes';
import { linkRoutes } from './routers/links.routes';
import { checkoutRoutes } from './routers/checkout.routes';
import { publicRoutes } from './routers/public.routes';
import { webhookRoutes } from './routers/webhooks.routes';
import { streamRoutes } from './routers/streams.routes';
import { clientTokenRoutes } from './routers/clientTokens.routes';

/** Every REST operation the gateway serves; one array per router file. */
export const allRoutes: RouteDefinition[] = [
  ...accountRoutes,
  ...apiKeyRoutes,
  ...paymentMethodRoutes,
  ...paymentRoutes,
  ...refundRoutes,
  ...eventRoutes,
  ...sandboxRoutes,
  ...logRoutes,
  ...linkRoutes,
  ...checkoutRoutes,
  ...publicRoutes,
  ...webhookRoutes,
  ...streamRoutes,
  ...clientTokenRoutes,
];

/**
 * The per-IP bucket that counts a public operation (its route's `ipBucket`), so that GraphQL's public
 * fields count in the same bucket as the REST route they mirror. Throws for an operation that is not a
 * public route.
 */
export function publicRouteBucket(operationId: OperationId): PublicBucket {
  const def = allRoutes.find((r) => r.operationId === operationId);
  if (!def || !('public' in def.options)) throw new Error(`${operationId} is not a public REST route`);
  return def.options.ipBucket ?? 'public';
}
