import { createHmac, timingSafeEqual } from 'node:crypto';
import { WebhookSignatureError, type WebhookEvent } from './signature.js';

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

/** The request's headers: Node's `req.headers` (lower-case keys) or a fetch `Headers`. */
export type StandardWebhookRequestHeaders = Headers | Record<string, string | string[] | undefined>;

function header(headers: StandardWebhookRequestHeaders, name: string): string | undefined {
  const value = typeof (headers as Headers).get === 'function' ? (headers as Headers).get(name) : (headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(value) ? value[0] : (value ?? undefined);
}

/**
 * Verifies a delivery by its Standard Webhooks headers, as the specification's libraries do (the same
 * answers as `new Webhook(secret).verify(body, headers)` from `standardwebhooks`), and returns its Event.
 * Throws WebhookSignatureError: `malformed_header` (a header missing or not of its form),
 * `signature_mismatch`, `timestamp_out_of_tolerance` (more than `toleranceSeconds` from now, 5 min by
 * default as in those libraries), `invalid_payload`. Pass the raw received bytes.
 */
export function verifyStandardWebhook<TData = Record<string, unknown>>(
  rawBody: string | Buffer,
  headers: StandardWebhookRequestHeaders,
  secret: string | readonly string[],
  toleranceSeconds = 300,
  nowSeconds: number = Math.floor(Date.now() / 1000),
): WebhookEvent<TData> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signature = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signature) throw new WebhookSignatureError('malformed_header', 'Missing webhook-id, webhook-timestamp or webhook-signature');
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookSignatureError('malformed_header', 'webhook-timestamp must be unix seconds');
  if (typeof rawBody !== 'string' && !Buffer.isBuffer(rawBody)) {
    throw new WebhookSignatureError('invalid_payload', 'The raw body is needed as a string or Buffer (use express.raw({ type: "application/json" }))');
  }
  const secrets = (typeof secret === 'string' ? [secret] : [...secret]).filter((s) => typeof s === 'string' && s !== '');
  if (secrets.length === 0) throw new TypeError('verifyStandardWebhook needs at least one non-empty secret');
  // `v1,<base64>` values, space-separated; other versions are skipped, as the specification says.
  const candidates = signature
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3), 'base64'));
  let matched = false;
  for (const s of secrets) {
    const expected = Buffer.from(standardWebhookHmac(s, id, Number(timestamp), rawBody), 'base64');
    // Every candidate compared, none skipped once one matched: the time says nothing of which did.
    for (const c of candidates) if (c.length === expected.length && timingSafeEqual(c, expected)) matched = true;
  }
  if (!matched) throw new WebhookSignatureError('signature_mismatch', 'No webhook-signature matches the body for the given secret');
  if (Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) {
    throw new WebhookSignatureError('timestamp_out_of_tolerance', `webhook-timestamp is more than ${toleranceSeconds} s from now`);
  }
  let event: unknown;
  try {
    event = JSON.parse(typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8'));
  } catch {
    throw new WebhookSignatureError('invalid_payload', 'Body is not valid JSON');
  }
  if (typeof event !== 'object' || event === null || (event as { id?: unknown }).id !== id || typeof (event as { type?: unknown }).type !== 'string') {
    throw new WebhookSignatureError('invalid_payload', 'Body is not the event webhook-id names');
  }
  return event as WebhookEvent<TData>;
}
