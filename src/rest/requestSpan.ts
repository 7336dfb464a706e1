import type { IncomingHttpHeaders } from 'node:http';
import type { RequestHandler } from 'express';
import { tracingInternals } from '../tracing/tracing';
import { findOperation } from '../operations/contract';
import { bearerSecret } from '../operations/bearer';
import { GRAPHQL_PATH } from '../http/paths';
import { isClientTokenLike } from '../domain/clientTokens/clientTokenService';

/**
 * Whether a request may continue its caller's `traceparent`: only one made with an API key, to a route
 * that takes one (a REST operation that is not public; GraphQL over HTTP with a key in `Authorization`).
 * Anyone can send a keyless request, a payer on a public page included: continued, the trace id they
 * chose would follow the payment into the merchant's webhooks (`traceparent` of every attempt) and
 * their spans would hang under a parent the gateway never saw. A key that does not work is refused 401
 * before any work, so a keyed route continuing a forged key's trace costs nothing.
 */
export function continuesCallerTrace(method: string, path: string, headers: IncomingHttpHeaders): boolean {
  const secret = bearerSecret(headers.authorization);
  // A client token is held by a payer's browser, not by the merchant.
  if (!secret || isClientTokenLike(secret)) return false;
  if (path === GRAPHQL_PATH) return true;
  if (!/^\/v1\//i.test(path)) return false;
  const op = findOperation(method, path.slice(3));
  return op !== undefined && !op.public;
}

/**
 * With tracing on (src/tracing), one SERVER span per request; the REST pipeline names it by route
 * template and operation (nameRequestSpan) once it knows them. Everything the request does runs in it.
 * A keyed request continues the caller's W3C `traceparent`; any other starts a new trace whose span
 * links to the caller's context (continuesCallerTrace says why). Null with tracing off: nothing is mounted.
 */
export function requestSpan(): RequestHandler | null {
  const r = tracingInternals();
  if (!r) return null;
  const { api, tracer } = r;
  return (req, res, next) => {
    const caller = api.propagation.extract(api.ROOT_CONTEXT, req.headers);
    const callerSpan = api.trace.getSpanContext(caller);
    const continues = continuesCallerTrace(req.method, req.path, req.headers);
    const parent = continues ? caller : api.ROOT_CONTEXT;
    const links = !continues && callerSpan && api.trace.isSpanContextValid(callerSpan) ? [{ context: callerSpan }] : [];
    const span = tracer.startSpan(req.method, { kind: 1, attributes: { 'http.request.method': req.method, 'url.path': req.path }, links }, parent);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: 2 });
      span.end();
    };
    res.once('finish', end);
    res.once('close', end);
    api.context.with(api.trace.setSpan(parent, span), next);
  };
}
