import type { Request, Response } from 'express';
import type { ApiError } from '../errors';
import { logger } from '../logger';
import { hitLocalRateLimit, hitRateLimit, type RateLimitDecision } from '../domain/ratelimit/rateLimitService';
import { ipBucket, rateLimitHeaders, refuseIfOver, type RateCount } from '../operations/rateLimitPolicy';

/**
 * The rate-limit policy (../rateLimitPolicy.ts) on an Express response, for every HTTP surface (REST,
 * POST /graphql, the pages, the dashboard session): X-RateLimit-* written, 429 thrown.
 */

/**
 * Counts the request in its bucket, sets the X-RateLimit-* headers, and refuses with 429 (plus
 * Retry-After) once the bucket is over its limit for the current window.
 */
export async function enforceRateLimit(res: Response, bucket: string, limit: number): Promise<RateLimitDecision> {
  return applyRateLimit(res, await hitRateLimit(bucket, limit), limit);
}

/** The headers and the 429 of a decision already counted (e.g. by authenticateAndCount). */
export function applyRateLimit(res: Response, decision: RateLimitDecision, limit: number): RateLimitDecision {
  // Every caller's bucket here is a client IP's (the pages, the dashboard session, unidentified answers).
  applyCount(res, { decision, limit, scope: 'ip' });
  return decision;
}

/** The headers and the 429 of a count. */
export function applyCount(res: Response, count: RateCount): void {
  for (const [name, value] of Object.entries(rateLimitHeaders(count.decision))) res.setHeader(name, value);
  refuseIfOver(count);
}

/** The client address that per-IP buckets count (the socket's peer unless Express is told to trust a proxy). */
export function clientIp(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

/**
 * Every answer carries X-RateLimit-*, also those no key and no public route counted (401, maintenance,
 * unknown routes without a valid key): they are counted per client IP in a bucket of their own, so a client
 * guessing keys meets 429. Counted in memory when the database may be what failed. Returns the error to
 * answer. More: docs/decisions/notes/edge.md, "countUnidentified".
 */
export async function countUnidentified(err: ApiError, req: Request, res: Response, limit: number): Promise<ApiError> {
  // 503s are counted in this process: in maintenance nothing may touch the database, and without it
  // (service_unavailable) nothing can.
  const inProcess = err.code === 'maintenance' || err.code === 'service_unavailable';
  if (res.headersSent || res.hasHeader('X-RateLimit-Limit') || (err.status >= 500 && !inProcess)) return err;
  const bucket = ipBucket('unauthenticated', clientIp(req));
  let decision: RateLimitDecision;
  if (inProcess) {
    decision = hitLocalRateLimit(bucket, limit);
  } else {
    try {
      decision = await hitRateLimit(bucket, limit);
    } catch (failure) {
      logger.warn({ err: failure, requestId: res.locals.requestId }, 'could not count an unauthenticated answer in the database; counted in this process');
      decision = hitLocalRateLimit(bucket, limit);
    }
  }
  try {
    applyRateLimit(res, decision, limit);
    return err;
  } catch (refusal) {
    return refusal as ApiError;
  }
}
