import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Receiver-side check of the `Service-Signature` header, for integrators (`@pgw/client`, and
 * `@pgw/client/webhooks` for this part alone). The gateway signs with computeWebhookSignature from here
 * too (through src/webhooks/verifySignature.ts), so signer and verifier cannot drift. Self-contained on
 * purpose (node:crypto only), so it can be copied into a receiver as-is.
 *
 * Header format: `t=<unix seconds>,v1=<64 lowercase hex>[,v1=<hex>...]`. Each `v1` is the
 * HMAC-SHA256 of `<t>.<raw body>` keyed with an endpoint secret (`whsec_...`). During a secret
 * rotation the gateway sends two `v1` values (new first, then old); a receiver may likewise hold
 * several secrets. The signature is valid when any (secret, v1) pair matches.
 */

export type WebhookSignatureFailure =
  /** The header is missing, or not of the form `t=<digits>,v1=<hex>`. */
  | 'malformed_header'
  /** No `v1` value matches the body under any of the given secrets (tampered body, wrong secret). */
  | 'signature_mismatch'
  /** `t` differs from the current time by more than the tolerance (replay of an old delivery). */
  | 'timestamp_out_of_tolerance'
  /** No raw body (string/Buffer) was given, or the signature matched but the body is not a JSON event. */
  | 'invalid_payload';

export class WebhookSignatureError extends Error {
  readonly reason: WebhookSignatureFailure;

  constructor(reason: WebhookSignatureFailure, message: string) {
    super(message);
    this.name = 'WebhookSignatureError';
    this.reason = reason;
  }
}

/** The Event a verified delivery carries (the gateway's Event resource). */
export interface WebhookEvent<TData = Record<string, unknown>> {
  id: string;
  object: 'event';
  type: string;
  livemode: boolean;
  created_at: string;
  data: TData;
}

export interface ParsedSignatureHeader {
  timestamp: number;
  signatures: string[];
}

const HEX64 = /^[0-9a-f]{64}$/;

/** Parses the header; throws `malformed_header` when it is not usable. Unknown schemes are ignored. */
export function parseSignatureHeader(header: string | undefined | null): ParsedSignatureHeader {
  if (typeof header !== 'string' || header.trim() === '') {
    throw new WebhookSignatureError('malformed_header', 'Missing Service-Signature header');
  }
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new WebhookSignatureError('malformed_header', 'Service-Signature parts must be key=value');
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (timestamp !== undefined || !/^\d{1,12}$/.test(value)) {
        throw new WebhookSignatureError('malformed_header', 'Service-Signature must carry exactly one numeric t=');
      }
      timestamp = Number(value);
    } else if (key === 'v1') {
      if (!HEX64.test(value)) throw new WebhookSignatureError('malformed_header', 'v1 must be 64 lowercase hex characters');
      signatures.push(value);
    }
    // Other schemes (a future v2) are skipped so that old receivers keep working.
  }
  if (timestamp === undefined) throw new WebhookSignatureError('malformed_header', 'Service-Signature has no t=');
  if (signatures.length === 0) throw new WebhookSignatureError('malformed_header', 'Service-Signature has no v1=');
  return { timestamp, signatures };
}

/** Lowercase hex HMAC-SHA256 of `<t>.<body>`, as the gateway computes it. */
export function computeWebhookSignature(secret: string, timestamp: number, rawBody: string | Buffer): string {
  const mac = createHmac('sha256', secret);
  mac.update(`${timestamp}.`);
  mac.update(rawBody);
  return mac.digest('hex');
}

/**
 * Verifies a delivery and returns its parsed Event. Throws WebhookSignatureError (see `reason`)
 * when the header is malformed, no signature matches, or the timestamp is more than
 * `toleranceSeconds` away from now. Pass the raw received bytes: a re-serialized JSON body will not
 * match. `nowSeconds` is for tests.
 */
export function verifyWebhookSignature<TData = Record<string, unknown>>(
  rawBody: string | Buffer,
  header: string | undefined | null,
  secret: string | readonly string[],
  toleranceSeconds = 600,
  nowSeconds: number = Math.floor(Date.now() / 1000),
): WebhookEvent<TData> {
  const { timestamp, signatures } = parseSignatureHeader(header);
  const secrets = (typeof secret === 'string' ? [secret] : [...secret]).filter((s) => typeof s === 'string' && s !== '');
  if (secrets.length === 0) throw new TypeError('verifyWebhookSignature needs at least one non-empty secret');
  if (typeof rawBody !== 'string' && !Buffer.isBuffer(rawBody)) {
    // Typically a body parser ran first (or none matched): the raw bytes are needed.
    throw new WebhookSignatureError('invalid_payload', 'The raw body is needed as a string or Buffer (use express.raw({ type: "application/json" }))');
  }

  let matched = false;
  for (const s of secrets) {
    const expected = Buffer.from(computeWebhookSignature(s, timestamp, rawBody), 'hex');
    // Compare against every value without stopping early, so timing says nothing about which matched.
    for (const candidate of signatures) {
      if (timingSafeEqual(expected, Buffer.from(candidate, 'hex'))) matched = true;
    }
  }
  if (!matched) throw new WebhookSignatureError('signature_mismatch', 'No signature matches the body for the given secret');

  // Checked after the HMAC so that a forged header cannot probe the clock.
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) {
    throw new WebhookSignatureError('timestamp_out_of_tolerance', `Signature timestamp is more than ${toleranceSeconds} s from now`);
  }

  let event: unknown;
  try {
    event = JSON.parse(typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8'));
  } catch {
    throw new WebhookSignatureError('invalid_payload', 'Body is not valid JSON');
  }
  if (typeof event !== 'object' || event === null || typeof (event as { id?: unknown }).id !== 'string' || typeof (event as { type?: unknown }).type !== 'string') {
    throw new WebhookSignatureError('invalid_payload', 'Body is not an event');
  }
  return event as WebhookEvent<TData>;
}
