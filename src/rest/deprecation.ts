import type { Request } from 'express';
import type { OperationSpec } from '../../generated/operations';

/**
 * Deprecation on the wire, from what openapi.yaml marks (codegen.ts copies it to generated/operations.ts):
 * - a deprecated route answers with `Deprecation: @<unix time>` (RFC 9745), `Sunset: <HTTP date>`
 *   (RFC 8594) when it has a date, and `Link: <successor>; rel="successor-version"` when a route replaces it;
 * - a request that uses a deprecated parameter gets `Deprecation` and `Sunset` the same way, and
 *   `Link: </docs#/…>; rel="deprecation"`: the operation's documentation, which says what to send instead.
 * Headers only: the answer is otherwise the one the request would get (no Warning header, which RFC 9111
 * made obsolete). The contract's introduction ("Deprecations") tells integrators so.
 */
type Deprecated = Pick<OperationSpec, 'basePath' | 'deprecation' | 'deprecatedParameters'>;

/** A function giving the headers for one request, or null where the operation has nothing deprecated. */
export function deprecationHeaders(op: Deprecated): ((req: Request) => Record<string, string> | null) | null {
  const route = op.deprecation;
  const params = op.deprecatedParameters ?? [];
  if (!route && params.length === 0) return null;
  if (route) {
    const links = [`<${route.docs}>; rel="deprecation"`, ...(route.successor ? [`<${op.basePath}${route.successor}>; rel="successor-version"`] : [])];
    const headers = { Deprecation: deprecationValue(route.since), ...sunsetOf(route.sunset), Link: links.join(', ') };
    return () => headers;
  }
  return (req) => {
    const used = params.filter((p) => isPresent(req, p.in, p.name));
    if (used.length === 0) return null;
    // The earliest deprecation and sunset among those used: the one the client meets first.
    const since = used.map((p) => p.since).sort()[0]!;
    const sunsets = used.flatMap((p) => (p.sunset ? [p.sunset] : [])).sort();
    return { Deprecation: deprecationValue(since), ...sunsetOf(sunsets[0]), Link: `<${used[0]!.docs}>; rel="deprecation"` };
  };
}

function isPresent(req: Request, where: string, name: string): boolean {
  if (where === 'query') return (req.query as Record<string, unknown>)[name] !== undefined;
  if (where === 'header') return req.headers[name.toLowerCase()] !== undefined;
  return false;
}

/** RFC 9745's Structured Field Date: `@` and the unix time (the day's start, UTC). */
function deprecationValue(date: string): string {
  return `@${Date.parse(`${date}T00:00:00Z`) / 1000}`;
}

function sunsetOf(date: string | undefined): { Sunset: string } | Record<string, never> {
  return date ? { Sunset: new Date(`${date}T00:00:00Z`).toUTCString() } : {};
}
