import type { Config } from '../config';
import { ApiError } from '../errors';
import { hitRateLimit, type RateLimitDecision, type RateLimits } from '../domain/ratelimit/rateLimitService';
import type { OperationId } from './contract';
import { rateLimitedIn } from '../metrics/domain';

/**
 * The rate-limit policy every surface (REST, GraphQL over HTTP and WebSocket, the pages) applies: which
 * bucket counts a request, its limit, the X-RateLimit-* values of a decision and the 429 of a refusal.
 * Writing the headers onto a response is the protocol's part (http/rateLimit.ts for Express).
 */

/** A request counted in one window: the decision and the limit it was counted against. */
export interface RateCount {
  decision: RateLimitDecision;
  limit: number;
  /** Whose window it is: a key's (the default) or a client IP's bucket (pgw_rate_limited_total's scope). */
  scope?: 'key' | 'ip' | 'session';
}

/** X-RateLimit-* of a decision. */
export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(decision.limit),
    'X-RateLimit-Remaining': String(decision.remaining),
    'X-RateLimit-Reset': String(decision.resetSeconds),
  };
}

/**
 * The 429 of a decision over its limit, with Retry-After: the key's (or bucket's) window, or, when its
 * account is what is over (refusedBy), the account's, which its message names.
 */
export function rateLimitRefusal(decision: RateLimitDecision, limit: number, scope?: RateCount['scope']): ApiError {
  const retry = Math.max(1, decision.refusedBy?.resetSeconds ?? decision.resetSeconds);
  const what = decision.refusedBy
    ? `at most ${decision.refusedBy.limit} per minute for all of this account's API keys together`
    : scope === 'session'
      ? `at most ${limit} per minute for this dashboard session`
      : `at most ${limit} per minute`;
  return new ApiError('rate_limit_exceeded', `Too many requests: ${what}. Retry in ${retry} s.`, { 'Retry-After': String(retry) });
}

/** Throws the 429 of a count over its limit. */
export function refuseIfOver(count: RateCount): void {
  if (count.decision.allowed) return;
  rateLimitedIn(count.decision.refusedBy ? 'account' : (count.scope ?? 'key')).inc();
  throw rateLimitRefusal(count.decision, count.limit, count.scope);
}

/** The limits a key's request is counted against: its own window and its account's. */
export function keyRateLimits(config: Pick<Config, 'rateLimitPerMinute' | 'rateLimitPerAccountPerMinute'>): RateLimits {
  return { perKey: config.rateLimitPerMinute, perAccount: config.rateLimitPerAccountPerMinute };
}

/** The per-IP buckets of public operations: account creation has its own limit, the others share one. */
export type PublicBucket = 'public' | 'account_creation';

/**
 * The per-IP bucket of each public operation that does not count in the shared 'public' one. The contract
 * does not carry it; REST and GraphQL read it here, so a client's allowance is the same over both.
 */
const PUBLIC_BUCKETS: Partial<Record<OperationId, PublicBucket>> = {
  createSandboxAccount: 'account_creation',
};

export function publicBucketOf(operationId: OperationId): PublicBucket {
  return PUBLIC_BUCKETS[operationId] ?? 'public';
}

export function publicBucketLimit(bucket: PublicBucket, config: Pick<Config, 'accountCreationPerMinute' | 'publicRateLimitPerMinute'>): number {
  return bucket === 'account_creation' ? config.accountCreationPerMinute : config.publicRateLimitPerMinute;
}

export const ipBucket = (kind: string, ip: string) => `ip:${kind}:${ip}`;

/** Counts one call of a public operation in its per-IP bucket (not enforced: see refuseIfOver). */
export async function countPublicCall(
  operationId: OperationId,
  ip: string,
  config: Pick<Config, 'accountCreationPerMinute' | 'publicRateLimitPerMinute'>,
): Promise<RateCount> {
  const bucket = publicBucketOf(operationId);
  const limit = publicBucketLimit(bucket, config);
  return { decision: await hitRateLimit(ipBucket(bucket, ip), limit), limit, scope: 'ip' };
}
