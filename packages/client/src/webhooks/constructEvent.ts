import { isEventType, type Event } from './events.js';
import { verifyWebhookSignature, WebhookSignatureError } from './signature.js';

export interface ConstructEventOptions {
  /** Largest accepted distance, in seconds, between the signature's `t` and now (default 600, as the contract says). */
  tolerance?: number;
  /** Current time in Unix seconds (tests). */
  now?: number;
}

/**
 * Verifies a delivery (raw body, `Service-Signature` header, one secret or several during a rotation)
 * and returns its Event, typed by `type`: `switch (event.type)` narrows `event.data`. Throws
 * WebhookSignatureError (`reason`) when the header is malformed, no signature matches, the timestamp is
 * outside the tolerance, or the body is not an Event of a type this client knows (`invalid_payload`:
 * a gateway newer than the client; verifyWebhookSignature still returns such events untyped).
 */
export function constructEvent(
  rawBody: string | Buffer,
  signatureHeader: string | undefined | null,
  secret: string | readonly string[],
  options: ConstructEventOptions = {},
): Event {
  const event = verifyWebhookSignature<unknown>(rawBody, signatureHeader, secret, options.tolerance ?? 600, options.now);
  if (event.object !== 'event' || !isEventType(event.type) || typeof event.data !== 'object' || event.data === null) {
    throw new WebhookSignatureError('invalid_payload', `Not an event this client knows (type ${JSON.stringify(event.type)})`);
  }
  return event as unknown as Event;
}
