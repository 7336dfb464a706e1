import { computeWebhookSignature } from '../../webhooks/verifySignature';

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
