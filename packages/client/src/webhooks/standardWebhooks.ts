import { createHmac } from 'node:crypto';

/**
 * The Standard Webhooks signature (https://www.standardwebhooks.com), which every delivery carries beside
 * `Service-Signature`: receivers can verify with that specification's official libraries
 * (`standardwebhooks`, `svix`, in every language a merchant's backend is written in) instead of code of
 * ours. The gateway signs with this function (src/domain/webhooks/signature.ts).
 *
 * Headers: `webhook-id` (the event id), `webhook-timestamp` (unix seconds, the `t=` of `Service-Signature`)
 * and `webhook-signature`: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">` per secret,
 * space-separated (two during the 24 h after a rotation, newest first). The HMAC key is the
 * base64-decoded part of the secret after `whsec_`, as the specification defines.
 */
export function standardWebhookSignature(secrets: readonly string[], id: string, timestampSeconds: number, rawBody: string | Buffer): string {
  return secrets.map((secret) => `v1,${standardWebhookHmac(secret, id, timestampSeconds, rawBody)}`).join(' ');
}

/** The three Standard Webhooks headers of one attempt, by name as sent. */
export function standardWebhookHeaders(secrets: readonly string[], id: string, timestampSeconds: number, rawBody: string | Buffer): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': standardWebhookSignature(secrets, id, timestampSeconds, rawBody),
  };
}

function standardWebhookHmac(secret: string, id: string, timestampSeconds: number, rawBody: string | Buffer): string {
  const mac = createHmac('sha256', standardWebhookKey(secret));
  mac.update(`${id}.${timestampSeconds}.`);
  mac.update(rawBody);
  return mac.digest('base64');
}

/**
 * The key a `whsec_` secret stands for: its base64 part decoded. Secrets made before the Standard
 * Webhooks headers (`whsec_` and 32 base62 characters) are base64 too, and decode to 24 bytes, so every
 * endpoint's secret signs both headers, and an official library given the same secret verifies.
 */
export function standardWebhookKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}
