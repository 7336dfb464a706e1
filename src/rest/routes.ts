import type { RouteDefinition } from './defineRoute';
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

