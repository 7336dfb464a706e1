import type { Event } from './events.js';
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
 * outside the tolerance, or the body is not an event at all (`invalid_payload`).
 *
 * `EventType` is an open set (contract 1.1.0 on): a gateway newer than this client may send a type it
 * does not know. Such an event is returned as it came, genuine and verified, not refused: the receiver
 * answers 2xx and ignores it (a `default:` branch; `isEventType(event.type)` is false for it), rather
 * than answering an error that the gateway would retry until the delivery is dead-lettered.
 */
export function constructEvent(
  rawBody: string | Buffer,
  signatureHeader: string | undefined | null,
  secret: string | readonly string[],
  options: ConstructEventOptions = {},
): Event {
  const event = verifyWebhookSignature<unknown>(rawBody, signatureHeader, secret, options.tolerance ?? 600, options.now);
  if (event.object !== 'event' || typeof event.type !== 'string' || typeof event.data !== 'object' || event.data === null) {
    throw new WebhookSignatureError('invalid_payload', `Not an event (object ${JSON.stringify(event.object)}, type ${JSON.stringify(event.type)})`);
  }
  return event as unknown as Event;
}
