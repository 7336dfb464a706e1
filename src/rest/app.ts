import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import type { Config } from '../config';
import { ApiError, isApiError } from '../errors';
import { errorHandler, notFoundHandler, toApiError } from './errorHandler';
import { apiEntry, v1Mount, type DirectRoute, type RequestListener } from './apiEntry';
import { isPath } from '../http/paths';
import { bearerToken, toExpressHandler } from './pipeline';
import { authenticateKeyRequest } from '../http/authenticate';
import { countUnidentified } from '../http/rateLimit';
import type { WriteGate } from '../http/writeGate';
import { maintenanceError } from '../http/maintenance';
import { requestContext } from './requestContext';
import { requestSpan } from './requestSpan';
import { securityHeaders } from './securityHeaders';
import { clientTokenCors } from './cors';
import { apiOperationIds } from './routes';
import { operationDispatcher } from './operationDispatch';
import { getOperation } from '../operations/contract';
import { systemRoutes } from './systemRoutes';
import { series } from './series';
import { metricsRoute } from './metricsRoutes';
import { httpOperation } from '../metrics/http';
import type { GatewayRuntime } from '../domain/gatewayRuntime';
import type { Realtime } from '../realtime/createRealtime';

/** What src/server.ts builds for the gateway and hands to its API: GraphQL is handed the same write gate. */
export interface AppParts {
  /** Its write gate (src/http/writeGate.ts), shared with POST /graphql. */
  writeGate: WriteGate;
  /** Its realtime layer, in which the stream operations open their streams. */
  realtime: Realtime;
}

export interface AppExtensions {
  /**
   * Endpoints of one exact path, each one layer, tried right after the API (GraphQL's /graphql): their
   * requests need not walk past the probes, the docs and the page routers. The server's listener takes
   * the `direct` methods of `path` straight to the handler (./apiEntry.ts): only methods no later layer
   * of the app serves on that path.
   */
  endpoints?: Array<{ path: string; handler: RequestHandler; direct: readonly string[] }>;
  /**
   * Mounted at the root, in order, before the 404 handler (public pages, GraphiQL, the dashboard's
   * session routes and its app): src/server.ts composes them, so the API imports none of them.
   */
  rootRouters?: Router[];
}

/** /v1 requests that no operation matched: one label, never their paths. */
const unmatchedRequests = httpOperation('unmatched');

/**
 * Every /v1 request: maintenance, the write gate, the operation, else the 404 of an unknown route; and
 * their errors counted per client IP where nothing counted them yet, before the app's error handler.
 */
function apiHandler(config: Config, runtime: GatewayRuntime, parts: AppParts): RequestHandler {
  const handlers: RequestHandler[] = [];
  if (config.maintenanceMode) {
    handlers.push(() => {
      throw maintenanceError();
    });
  }
  // While this thread is saturated, writes past the cap wait here, before they cost anything (src/http/writeGate.ts).
  handlers.push(parts.writeGate);
  // Every operation of openapi.yaml, found by one table lookup (operationDispatch.ts says which of
  // Express's routing rules it keeps); what it does not find goes on to the 404 below.
  handlers.push(
    operationDispatcher(
      apiOperationIds.map((operationId) => {
        const op = getOperation(operationId);
        return { method: op.method, path: op.expressPath, handler: toExpressHandler(operationId, config, runtime, parts.realtime) };
      }),
    ),
  );
  // An unknown /v1 route made with a valid key is still that account's request: it counts in the key's
  // rate limit (its headers, and 429 over it) and GET /logs shows it. Without a valid key it is
  // counted per client IP below. Either way the answer is 404.
  handlers.push(async (req, res) => {
    res.locals.httpMetric = unmatchedRequests;
    await authenticateKeyRequest(bearerToken(req), res, config).catch((err: unknown) => {
      // No key that works: counted per client IP below. A key over its limit: its 429.
      if (isApiError(err) && err.code === 'rate_limit_exceeded') throw err;
    });
    throw new ApiError('resource_not_found', `Unrecognized request URL (${req.method} ${req.baseUrl}${req.path})`);
  });
  // Every /v1 answer carries X-RateLimit-*: the errors raised before a key or a public route counted
  // the request (401, maintenance, unknown routes, undecodable paths) are counted per client IP here.
  return series(handlers, async (err: unknown, req: Request, res: Response, next: NextFunction) => {
    const apiError = toApiError(err, req, String(res.locals.requestId ?? ''));
    next(await countUnidentified(apiError, req, res, config.publicRateLimitPerMinute));
  });
}

/** The gateway's Express app, and the listener its HTTP server takes requests with (./apiEntry.ts). */
export interface GatewayApp {
  app: Express;
  listener: RequestListener;
}

/** `runtime`: the gateway's own services, handed to every operation it serves; `parts`: the rest of its own. */
export function createApp(config: Config, runtime: GatewayRuntime, parts: AppParts, ext: AppExtensions = {}): GatewayApp {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  // The prologue of every request, one layer (series.ts says why).
  const prologue = series([
    // First, so that everything the request does (its log line included) runs in its span.
    ...[requestSpan()].filter((h) => h !== null),
    securityHeaders,
    requestContext,
    // Before every route, so that refusals (401, 429) of client-token requests are readable cross-origin too.
    clientTokenCors(config),
  ]);
  app.use(prologue);
  // The API: Express matches the /v1 mount (any case, as it always has) and strips it from req.url;
  // every /v1 request is answered in there. The server's listener takes /v1 requests there directly.
  const api = apiHandler(config, runtime, parts);
  app.use('/v1', api);
  for (const endpoint of ext.endpoints ?? []) app.use(endpoint.handler);
  const metrics = metricsRoute(config);
  if (metrics) app.use(metrics);
  // After the API: its requests need not walk past the probes and docs.
  app.use(systemRoutes());

  for (const router of ext.rootRouters ?? []) app.use(router);

  app.use(notFoundHandler);
  app.use(errorHandler);
  const routes: DirectRoute[] = [
    { take: v1Mount, handler: api },
    ...(ext.endpoints ?? []).map((e) => ({ take: (url: string, method: string) => e.direct.includes(method) && isPath(url, e.path), handler: e.handler })),
  ];
  return { app, listener: apiEntry(app, { prologue, routes, notFound: notFoundHandler, errorHandler }) };
}
