import type { components } from '../generated/openapi.js';
import { eventTypes } from '../generated/operations.js';

/** An Event as the gateway sends it (webhook body, `GET /events` item): a union discriminated by `type`. */
export type Event = components['schemas']['Event'];
export type EventType = Event['type'];
/** The Event of one type, e.g. `EventOf<'payment.succeeded'>` (whose `data` is a PaymentIntent). */
export type EventOf<T extends EventType> = Extract<Event, { type: T }>;

const known: ReadonlySet<string> = new Set(eventTypes);

/** True when `type` is one of the contract's event types (this client's version of the contract). */
export function isEventType(type: unknown): type is EventType {
  return typeof type === 'string' && known.has(type);
}
