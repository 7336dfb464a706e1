import { RateLimitModel } from './rateLimit.model';

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window reopens (X-RateLimit-Reset), integer >= 0. */
  resetSeconds: number;
}

const WINDOW_MS = 60_000;

function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: number }).code === 11000;
}

/**
 * Counts one request in `bucket`. The counter lives in the database so every gateway process shares
 * it. A window opens with the first request and lasts a minute; the count is one atomic $inc, and
 * opening a new window is an upsert guarded by the unique _id, so two processes can never both
 * start a fresh window.
 */
export async function hitRateLimit(bucket: string, limit: number, nowMs: number = Date.now()): Promise<RateLimitDecision> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const now = new Date(nowMs);
    const current = await RateLimitModel.findOneAndUpdate(
      { _id: bucket, window_end: { $gt: now } },
      { $inc: { count: 1 } },
      { returnDocument: 'after' },
    ).lean();
    if (current) return decide(current.count, current.window_end.getTime(), limit, nowMs);
    try {
      const opened = await RateLimitModel.findOneAndUpdate(
        { _id: bucket, window_end: { $lte: now } },
        { $set: { count: 1, window_end: new Date(nowMs + WINDOW_MS) } },
        { returnDocument: 'after', upsert: true },
      ).lean();
      if (opened) return decide(opened.count, opened.window_end.getTime(), limit, nowMs);
    } catch (err) {
      // Another request opened the window first: count in it.
      if (!isDuplicateKey(err)) throw err;
    }
  }
  throw new Error(`rate limit bucket ${bucket} is contended`);
}

function decide(count: number, windowEndMs: number, limit: number, nowMs: number): RateLimitDecision {
  return {
    allowed: count <= limit,
    limit,
    remaining: Math.max(0, limit - count),
    resetSeconds: Math.max(0, Math.ceil((windowEndMs - nowMs) / 1000)),
  };
}
