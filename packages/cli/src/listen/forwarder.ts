import { computeWebhookSignature, standardWebhookHeaders } from '@pgw/client';
import type { GatewayEvent } from '../eventSocket';

/** The gateway's own webhook User-Agent (src/domain/webhooks/deliveryAttempts.ts): receivers see no difference. */
export const WEBHOOK_USER_AGENT = 'PaymentGatewaySandbox-Webhooks/1.0';
/** A delivery attempt's deadline at the gateway; the same here, so a slow receiver shows the same way. */
export const FORWARD_TIMEOUT_MS = 5_000;

export interface ForwardResult {
  /** HTTP status of the receiver's answer; 0 when none came. */
  status: number;
  ms: number;
  /** Why no answer came (connection refused, timeout). */
  error?: string;
}

/** `t=<unix>,v1=<hex>`, with the HMAC the gateway itself signs with (@pgw/client). */
export function signatureHeader(secret: string, timestampSeconds: number, body: string): string {
  return `t=${timestampSeconds},v1=${computeWebhookSignature(secret, timestampSeconds, body)}`;
}

/**
 * POSTs one event as the gateway delivers webhooks: the Event JSON as the body and the same headers
 * (`Service-Signature` and the Standard Webhooks headers signed with the local secret, `Service-Event-Id`),
 * no redirects followed, 5 s.
 * `ageSeconds` signs with a `t` that long ago (`--chaos stale_timestamp`).
 */
export async function forwardEvent(event: GatewayEvent, url: string, secret: string, ageSeconds = 0): Promise<ForwardResult> {
  const body = JSON.stringify(event);
  const t = Math.floor(Date.now() / 1000) - ageSeconds;
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  try {
    const res = await fetch(url, {
      method: 'POST',
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': WEBHOOK_USER_AGENT,
        'Service-Signature': signatureHeader(secret, t, body),
        ...standardWebhookHeaders([secret], event.id, t, body),
        'Service-Event-Id': event.id,
      },
    });
    // The answer's body is not used; reading it lets the connection be reused.
    await res.arrayBuffer().catch(() => undefined);
    return { status: res.status, ms: ms() };
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    const reason = (err as Error).name === 'TimeoutError' ? `no answer within ${FORWARD_TIMEOUT_MS / 1000} s` : (cause ?? (err as Error).message);
    return { status: 0, ms: ms(), error: reason };
  }
}

/** How `listen` retries a forward that got no 2xx: `retries` more attempts, waiting base × 2^n (capped). */
export interface ForwardRetryPolicy {
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_FORWARD_RETRIES = 3;
export const MAX_FORWARD_RETRIES = 10;
export const FORWARD_RETRY_POLICY: ForwardRetryPolicy = { retries: DEFAULT_FORWARD_RETRIES, baseDelayMs: 1_000, maxDelayMs: 10_000 };

export const delivered = (r: ForwardResult) => r.status >= 200 && r.status < 300;

/**
 * Forwards one event until the receiver answers 2xx or `retries` more attempts have failed (at least
 * once, bounded): `onFailedAttempt` hears of each failed attempt that will be retried, and after how long.
 * Resolves with the last attempt's result and the number of attempts made.
 */
export async function forwardWithRetries(
  send: () => Promise<ForwardResult>,
  policy: ForwardRetryPolicy,
  onFailedAttempt: (result: ForwardResult, attempt: number, retryInMs: number) => void,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): Promise<{ result: ForwardResult; attempts: number }> {
  for (let attempt = 1; ; attempt++) {
    const result = await send();
    if (delivered(result) || attempt > policy.retries) return { result, attempts: attempt };
    const wait = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
    onFailedAttempt(result, attempt, wait);
    await sleep(wait);
  }
}
