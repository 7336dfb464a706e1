import type { RouteDefinition } from './defineRoute';
import { accountRoutes } from './routers/accounts.routes';
import { apiKeyRoutes } from './routers/apiKeys.routes';
import { logRoutes } from './routers/logs.routes';
import { paymentMethodRoutes } from './routers/paymentMethods.routes';

/** Every REST operation the gateway serves; one array per router file. */
export const allRoutes: RouteDefinition[] = [
  ...accountRoutes,
  ...apiKeyRoutes,
  ...paymentMethodRoutes,
  ...logRoutes,
];
