import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorRequestHandler, Express, NextFunction, Request, RequestHandler, Response } from 'express';
import { isPromise } from './series';

/** The gateway's request listener: what src/server.ts hands its HTTP server. */
export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * A route the listener takes straight to its handler, past the Express app's router. `take` says whether
 * a request is its own, from the raw URL and method: with `mount`, the length of the URL's prefix that
 * the handler sees stripped (Express's `app.use(prefix, handler)`); else true (`app.use(handler)`).
 */
export interface DirectRoute {
  take(url: string, method: string): number | boolean;
  handler: RequestHandler;
}

/**
 * The HTTP server's listener: the API's requests (/v1, POST /graphql) go straight to the prologue and
 * their handler, as the Express app's own router would take them there; every other request goes to
 * the app. Why: the router cost every API request a pass over its layers, a path match per layer, the
 * mount's URL rewriting and restoring, and a final handler made for it: 4 % of a GET's instructions
 * (bench/README.md, "Budgets per request"; docs/decisions/0003-one-layer-per-request-stage.md).
 *
 * What the router would have done is done here: the request and response get the app's prototypes
 * (req.path, req.query, res.status... as before) and `res.locals`; under a mount the handler sees the
 * mount's view of the URL (`req.baseUrl` the prefix as sent, `req.url` the rest, `req.originalUrl` the
 * whole). An error the handler passes on reaches the app's error handler, and a request it leaves
 * unanswered the app's 404, with the URL as the app sees it, as through the router. A route's handler
 * must leave unanswered only what no later layer of the app serves.
 */
export function apiEntry(
  app: Express,
  parts: { prologue: RequestHandler; routes: readonly DirectRoute[]; notFound: RequestHandler; errorHandler: ErrorRequestHandler },
): RequestListener {
  const { prologue, routes, notFound, errorHandler } = parts;
  return (rawReq, rawRes) => {
    const url = rawReq.url ?? '';
    let route: DirectRoute | undefined;
    let mount: number | boolean = false;
    for (const r of routes) {
      mount = r.take(url, rawReq.method ?? '');
      if (mount !== false && mount !== 0) {
        route = r;
        break;
      }
    }
    if (!route) {
      app(rawReq, rawRes);
      return;
    }
    // As app.handle does (express/lib/application.js), where the server did not make them so already
    // (src/http/httpServer.ts, usePrototypes): a prototype changed costs V8 a new map for the object.
    if (!inherits(rawReq, app.request)) Object.setPrototypeOf(rawReq, app.request);
    if (!inherits(rawRes, app.response)) Object.setPrototypeOf(rawRes, app.response);
    const req = rawReq as Request;
    const res = rawRes as unknown as Response;
    req.res = res;
    res.req = req;
    if (!res.locals) res.locals = Object.create(null) as Response['locals'];
    req.originalUrl = url;
    req.baseUrl = '';
    req.params = {};
    // The app's view of the URL again, as the router restores it after a mount.
    const appUrl = () => {
      req.baseUrl = '';
      req.url = url;
    };
    const failed = (err: unknown) => {
      appUrl();
      try {
        errorHandler(err, req, res, lastResort(res));
      } catch (thrown) {
        lastResort(res)(thrown);
      }
    };
    const unanswered = (err?: unknown) => {
      if (err) return failed(err);
      appUrl();
      notFound(req, res, failed);
    };
    const { handler } = route;
    prologue(req, res, (err?: unknown) => {
      if (err) return failed(err);
      if (typeof mount === 'number') {
        req.baseUrl = url.slice(0, mount);
        const rest = url.slice(mount);
        req.url = rest.startsWith('/') ? rest : `/${rest}`;
      }
      try {
        const settled: unknown = handler(req, res, unanswered);
        if (isPromise(settled)) settled.then(undefined, (rejection: unknown) => failed(rejection ?? new Error('Rejected promise')));
      } catch (thrown) {
        failed(thrown);
      }
    });
  };
}

/**
 * The length of the `/v1` mount at the start of `url` (3), or 0 when it is not there: Express's mount
 * matches any case and ends at `/`, `?` or the end of the path.
 */
export function v1Mount(url: string): number {
  if (url.length < 3 || url.charCodeAt(0) !== 47 /* / */) return 0;
  const v = url.charCodeAt(1);
  if ((v !== 118 && v !== 86) /* v V */ || url.charCodeAt(2) !== 49 /* 1 */) return 0;
  if (url.length === 3) return 3;
  const next = url.charCodeAt(3);
  return next === 47 /* / */ || next === 63 /* ? */ ? 3 : 0;
}

/** When even the error handler fails: the connection is cut rather than left hanging. */
function lastResort(res: Response): NextFunction {
  return () => {
    if (!res.headersSent) {
      res.statusCode = 500;
      res.end();
    } else {
      res.destroy();
    }
  };
}

const isPrototypeOf = Object.prototype.isPrototypeOf;
/** Whether `proto` is on `value`'s prototype chain (not read from the objects: either may shadow it). */
function inherits(value: object, proto: object): boolean {
  return isPrototypeOf.call(proto, value);
}
