import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Config } from '../config';
import { ApiError } from '../errors';
import { metricsText } from '../metrics/registry';
import { httpOperation } from '../metrics/http';
import { bearerSecret } from '../operations/bearer';

const METRICS_PATH = '/metrics';
const metricsRequests = httpOperation('getMetrics');

/**
 * GET /metrics: the Prometheus text of this process's metrics (src/metrics/). Not under /v1 and not
 * rate limited, like the probes: it is for the operator's scraper, not for tenants. With METRICS_TOKEN
 * set it needs `Authorization: Bearer <token>` (401 in the error envelope otherwise); METRICS_ENABLED=false
 * leaves it unmounted, so it is a 404 like any unknown path. Returns null when disabled.
 */
export function metricsRoute(config: Pick<Config, 'metricsEnabled' | 'metricsTokenHash'>): RequestHandler | null {
  if (!config.metricsEnabled) return null;
  const expected = config.metricsTokenHash;
  return (req, res, next) => {
    if (req.path !== METRICS_PATH || (req.method !== 'GET' && req.method !== 'HEAD')) return next();
    res.locals.httpMetric = metricsRequests;
    // Both sides hashed: equal lengths whatever was sent, so the comparison takes the same time.
    if (expected && !timingSafeEqual(createHash('sha256').update(bearerSecret(req.headers.authorization) ?? '').digest(), expected)) {
      return next(new ApiError('authentication_failed', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>'));
    }
    metricsText().then(({ contentType, text }) => {
      res.setHeader('Cache-Control', 'no-store');
      res.type(contentType).send(text);
    }, next);
  };
}
