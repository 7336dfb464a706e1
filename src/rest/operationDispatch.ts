import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** One /v1 operation's route: its method, its Express path relative to /v1 (`/payment_intents/:id`), its handler. */
export interface OperationRoute {
  method: string;
  path: string;
  handler: RequestHandler;
}

interface CompiledRoute {
  method: string;
  /** A literal segment, or null where the path has a parameter. */
  literals: Array<string | null>;
  params: Array<string | null>;
  handler: RequestHandler;
}

/**
 * Finds a /v1 request's operation by segment count, method and segments, in one table lookup instead of a
 * chain of Express routers (docs/decisions/0003-one-layer-per-request-stage.md), with Express router 2's
 * rules: case-sensitive, one trailing slash, HEAD runs a GET route, OPTIONS answers `Allow`; anything else
 * goes to `next()`. More: docs/decisions/notes/edge.md, "The /v1 dispatch table".
 */
export function operationDispatcher(routes: readonly OperationRoute[]): RequestHandler {
  const bySegmentCount = new Map<number, CompiledRoute[]>();
  for (const route of routes) {
    const segments = route.path.split('/').slice(1);
    const compiled: CompiledRoute = {
      method: route.method.toUpperCase(),
      literals: segments.map((s) => (s.startsWith(':') ? null : s)),
      params: segments.map((s) => (s.startsWith(':') ? s.slice(1) : null)),
      handler: route.handler,
    };
    let list = bySegmentCount.get(segments.length);
    if (!list) bySegmentCount.set(segments.length, (list = []));
    list.push(compiled);
  }

  return (req: Request, res: Response, next: NextFunction) => {
    const segments = pathSegments(req.path);
    const candidates = segments && bySegmentCount.get(segments.length);
    if (!candidates) return next();
    const allowed: string[] = [];
    for (const route of candidates) {
      if (!matches(route, segments)) continue;
      if (route.method === req.method || (req.method === 'HEAD' && route.method === 'GET')) {
        let params: Record<string, string>;
        try {
          params = paramsOf(route, segments);
        } catch (err) {
          return next(err);
        }
        req.params = params;
        return route.handler(req, res, next);
      }
      allowed.push(route.method);
      if (route.method === 'GET') allowed.push('HEAD');
    }
    if (req.method === 'OPTIONS' && allowed.length > 0) return sendAllow(res, allowed);
    next();
  };
}

/** The path's segments without the leading slash and one trailing slash; null when one is empty. */
function pathSegments(path: string): string[] | null {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(1, -1) : path.slice(1);
  const segments = trimmed.split('/');
  return segments.includes('') ? null : segments;
}

function matches(route: CompiledRoute, segments: string[]): boolean {
  for (let i = 0; i < segments.length; i++) {
    const literal = route.literals[i];
    if (literal !== null && literal !== segments[i]) return false;
  }
  return true;
}

function paramsOf(route: CompiledRoute, segments: string[]): Record<string, string> {
  const params: Record<string, string> = {};
  route.params.forEach((name, i) => {
    if (name !== null) params[name] = decodeSegment(segments[i]!);
  });
  return params;
}

/** As Express's router decodes a parameter: its URIError says which value failed, with status 400. */
function decodeSegment(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch (err) {
    if (err instanceof URIError) {
      err.message = `Failed to decode param '${value}'`;
      Object.assign(err, { status: 400, statusCode: 400 });
    }
    throw err;
  }
}

/** Express's automatic OPTIONS answer: the path's methods, unique and sorted. */
function sendAllow(res: Response, methods: string[]): void {
  const allow = [...new Set(methods)].sort().join(', ');
  res.setHeader('Allow', allow);
  res.setHeader('Content-Length', Buffer.byteLength(allow));
  res.setHeader('Content-Type', 'text/plain');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.end(allow);
}
