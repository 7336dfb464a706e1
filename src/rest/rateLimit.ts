import type { Response } from 'express';
import { ApiError } from '../errors';
import { hitRateLimit, type RateLimitDecision } from '../domain/ratelimit/rateLimit.service';

/**
 * Counts the request in its bucket, sets the X-RateLimit-* headers, and refuses with 429 (plus
 * Retry-After) once the bucket is over its limit for the current window.
 */
export async function enforceRateLimit(res: Response, bucket: string, limit: number): Promise<RateLimitDecision> {
  return applyRateLimit(res, await hitRateLimit(bucket, limit), limit);
}

/** The headers and the 429 of a decision already counted (e.g. by authenticateAndCount). */
export function applyRateLimit(res: Response, decision: RateLimitDecision, limit: number): RateLimitDecision {
  res.setHeader('X-RateLimit-Limit', String(decision.limit));
  res.setHeader('X-RateLimit-Remaining', String(decision.remaining));
  res.setHeader('X-RateLimit-Reset', String(decision.resetSeconds));
  if (!decision.allowed) {
    throw new ApiError('rate_limit_exceeded', `Too many requests: at most ${limit} per minute. Retry in ${Math.max(1, decision.resetSeconds)} s.`, {
      'Retry-After': String(Math.max(1, decision.resetSeconds)),
    });
  }
  return decision;
}

export const keyBucket = (keyId: string) => `key:${keyId}`;
export const ipBucket = (kind: string, ip: string) => `ip:${kind}:${ip}`;
