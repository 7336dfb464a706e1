import type { RequestHandler } from 'express';
import { tracingInternals } from '../tracing/tracing';

/**
 * With tracing on (src/tracing), one SERVER span per request, continuing the caller's W3C
 * `traceparent`; the REST pipeline names it by route template and operation (nameRequestSpan) once it
 * knows them. Everything the request does runs in it. Null with tracing off: nothing is mounted.
 */
export function requestSpan(): RequestHandler | null {
  const r = tracingInternals();
  if (!r) return null;
  const { api, tracer } = r;
  return (req, res, next) => {
    const parent = api.propagation.extract(api.ROOT_CONTEXT, req.headers);
    const span = tracer.startSpan(req.method, { kind: 1, attributes: { 'http.request.method': req.method, 'url.path': req.path } }, parent);
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
