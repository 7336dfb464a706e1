import express, { type Express, type Router } from 'express';
import type { Config } from '../config';
import { ApiError } from '../errors';
import { errorHandler, notFoundHandler } from './errorHandler';
import { authenticate } from '../domain/accounts/apiKey.service';
import { bearerToken, toExpressHandler } from './pipeline';
import { requestContext } from './requestContext';
import { allRoutes } from './routes';
import { getOperation } from './generatedContract';
import { systemRoutes } from './system.routes';

export interface AppExtensions {
  /** Mounted at the root before the 404 handler (public pages, GraphQL). */
  rootRouters?: Router[];
}

export function createApp(config: Config, ext: AppExtensions = {}): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  app.use(requestContext);
  app.use(systemRoutes());

  const v1 = express.Router({ caseSensitive: true, strict: false });
  if (config.maintenanceMode) {
    v1.use(() => {
      throw new ApiError('maintenance', 'The sandbox is under scheduled maintenance. Retry later.', { 'Retry-After': '60' });
    });
  }
  for (const def of allRoutes) {
    const op = getOperation(def.operationId);
    const method = op.method.toLowerCase() as 'get' | 'post' | 'delete' | 'put' | 'patch';
    v1[method](op.expressPath, toExpressHandler(def, config));
  }
  // An unknown /v1 route made with a valid key is still that account's request: identify the key so
  // GET /logs shows it, then answer 404.
  v1.use(async (req, res, next) => {
    res.locals.auth = await authenticate(bearerToken(req)).catch(() => undefined);
    next();
  });
  app.use('/v1', v1);

  for (const router of ext.rootRouters ?? []) app.use(router);

  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}
