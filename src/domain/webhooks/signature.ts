import { computeWebhookSignature, standardWebhookHeaders } from '../../webhooks/verifySignature';

/**
 * The `Service-Signature` value for one attempt: `t=<unix>,v1=<hex>` per active secret, newest
 * secret first (two values during the 24 h after a rotation). `t` is real wall-clock time, not the
 * account's sandbox clock, because receivers compare it with their own clock.
 */
export function signatureHeader(rawBody: string, secrets: readonly string[], timestampSeconds: number): string {
  const parts = [`t=${timestampSeconds}`];
  for (const secret of secrets) parts.push(`v1=${computeWebhookSignature(secret, timestampSeconds, rawBody)}`);
  return parts.join(',');
}

/** How one attempt is signed: with these secrets, at this time (a chaos copy's may be wrong or old). */
export interface Signing {
  secrets: readonly string[];
  timestampSeconds: number;
}

/** Now, with the given secrets: how a genuine attempt is signed. */
export function signNow(secrets: readonly string[]): Signing {
  return { secrets, timestampSeconds: Math.floor(Date.now() / 1000) };
}

/**
 * Every signature header of one attempt, from one signing: `Service-Signature` (the specification's) and
 * the Standard Webhooks headers (contract decisions, "Versions and compatibility"), with the same time
 * and secrets, so a forged or stale chaos copy is forged or stale in both.
 */
export function signatureHeaders(eventId: string, rawBody: string, s: Signing): { 'Service-Signature': string } & Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  return {
    'Service-Signature': signatureHeader(rawBody, s.secrets, s.timestampSeconds),
    ...standardWebhookHeaders(s.secrets, eventId, s.timestampSeconds, rawBody),
  };
}
