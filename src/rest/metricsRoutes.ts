import { createHash, timingSafeEqual } from 'node:crypto';
import net from 'node:net';
import type { RequestHandler } from 'express';
import type { Config } from '../config';
import { ApiError } from '../errors';
import { metricsText } from '../metrics/registry';
import { httpOperation } from '../metrics/http';
import { bearerSecret } from '../operations/bearer';
import { ipBucket } from '../operations/rateLimitPolicy';
import { hitLocalRateLimit } from '../domain/ratelimit/rateLimitService';
import { applyRateLimit } from '../http/rateLimit';

const METRICS_PATH = '/metrics';
const metricsRequests = httpOperation('getMetrics');

/**
 * Whether `address`, a socket's peer, is this machine's loopback: 127.0.0.0/8, ::1, or an IPv4
 * loopback address mapped into IPv6 (`::ffff:127.x.y.z`, what a dual-stack listener reports).
 */
export function isLoopbackPeer(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.toLowerCase().startsWith('::ffff:') ? address.slice(7) : address;
  if (net.isIPv4(v4)) return v4.startsWith('127.');
  return net.isIPv6(address) && /^(0{0,4}:){2,7}0{0,3}1$/.test(address);
}

/**
 * GET /metrics, for the operator's scraper (docs/operations.md, "Metrics and alerts"): loopback peers only
 * without METRICS_TOKEN, its bearer token with it; counted per address in this process's memory, since
 * metrics must answer while the database is away. Null when METRICS_ENABLED=false (a 404). More:
 * docs/decisions/notes/edge.md, "GET /metrics".
 */
export function metricsRoute(config: Pick<Config, 'metricsEnabled' | 'metricsTokenHash' | 'publicRateLimitPerMinute'>): RequestHandler | null {
  if (!config.metricsEnabled) return null;
  const expected = config.metricsTokenHash;
  return (req, res, next) => {
    if (req.path !== METRICS_PATH || (req.method !== 'GET' && req.method !== 'HEAD')) return next();
    res.locals.httpMetric = metricsRequests;
    const peer = req.socket.remoteAddress;
    try {
      applyRateLimit(res, hitLocalRateLimit(ipBucket('metrics', peer ?? 'unknown'), config.publicRateLimitPerMinute), config.publicRateLimitPerMinute);
    } catch (refusal) {
      return next(refusal);
    }
    // Both sides hashed: equal lengths whatever was sent, so the comparison takes the same time.
    if (expected && !timingSafeEqual(createHash('sha256').update(bearerSecret(req.headers.authorization) ?? '').digest(), expected)) {
      return next(new ApiError('authentication_failed', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>'));
    }
    if (!expected && !isLoopbackPeer(peer)) {
      return next(new ApiError('permission_denied', 'GET /metrics without METRICS_TOKEN answers only on loopback; set METRICS_TOKEN to scrape it from another address.'));
    }
    metricsText().then(({ contentType, text }) => {
      res.setHeader('Cache-Control', 'no-store');
      res.type(contentType).send(text);
    }, next);
  };
}
