import { parseRetryAfter } from './errors.js';

export interface RetryOptions {
  /** Retries after the first attempt (default 2; 0 turns retrying off). */
  maxRetries?: number;
  /** Backoff base in ms when no Retry-After came: base × 2^attempt, full jitter (default 500). */
  baseDelayMs?: number;
  /** Upper bound of one wait, Retry-After included (default 60 000): a longer wait is not retried. */
  maxDelayMs?: number;
  /** How to wait `ms` before a retry (default a timer); a hook to log waits, or for tests to record them. */
  sleep?: (ms: number) => Promise<void>;
}

/** Statuses that mean "not done, come back": over the rate limit, or the gateway briefly unavailable. */
const RETRY_STATUSES = new Set([429, 503]);

/**
 * A request may be sent again when sending it twice cannot do a thing twice: reads, deletes (a second
 * delete changes nothing more), PUTs (they replace a setting with the same one), and POSTs carrying an Idempotency-Key (the gateway replays them). Any
 * other POST is never re-sent, even after a 429, so a retry can never create a second object.
 */
export function isRetryable(request: Request): boolean {
  if (['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'].includes(request.method)) return true;
  return request.headers.has('idempotency-key');
}

/** How long to wait before retry number `attempt` (0-based): Retry-After when sent, else jittered backoff. */
export function retryDelayMs(response: Response | null, attempt: number, opts: Required<RetryOptions>): number {
  const retryAfter = response ? parseRetryAfter(response) : null;
  if (retryAfter !== null) return retryAfter * 1000;
  return Math.random() * Math.min(opts.maxDelayMs, opts.baseDelayMs * 2 ** attempt);
}

export function withDefaults(opts: RetryOptions = {}): Required<RetryOptions> {
  const maxRetries = opts.maxRetries ?? 2;
  if (!Number.isInteger(maxRetries) || maxRetries < 0) throw new TypeError('maxRetries must be an integer >= 0');
  return { maxRetries, baseDelayMs: opts.baseDelayMs ?? 500, maxDelayMs: opts.maxDelayMs ?? 60_000, sleep: opts.sleep ?? sleep };
}

/**
 * Wraps a fetch so that 429 and 503 answers (and, for retryable requests, connection failures) are tried
 * again up to `maxRetries` times. The request is cloned before each attempt, so the same body and the same
 * Idempotency-Key go out every time.
 */
export function retryingFetch(
  fetchImpl: (request: Request) => Promise<Response>,
  options: RetryOptions = {},
): (request: Request) => Promise<Response> {
  const opts = withDefaults(options);
  return async (request) => {
    const retryable = isRetryable(request);
    for (let attempt = 0; ; attempt++) {
      const last = !retryable || attempt >= opts.maxRetries;
      let response: Response;
      try {
        response = await fetchImpl(last ? request : request.clone());
      } catch (err) {
        if (last) throw err;
        await opts.sleep(retryDelayMs(null, attempt, opts));
        continue;
      }
      if (last || !RETRY_STATUSES.has(response.status)) return response;
      const delay = retryDelayMs(response, attempt, opts);
      if (delay > opts.maxDelayMs) return response;
      // Free the connection before waiting; the body of an answer we drop is not needed.
      await response.body?.cancel().catch(() => undefined);
      await opts.sleep(delay);
    }
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
