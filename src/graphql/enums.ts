/**
 * GraphQL enum names ↔ the REST spellings the domain uses. GraphQL enum values must be names
 * (`MULTICAIXA_EXPRESS`, `PAYMENT_SUCCEEDED`, `PAYMENT_INTENTS_READ`), the domain speaks the contract's
 * values (`multicaixa_express`, `payment.succeeded`, `payment_intents:read`). These are the only
 * conversions; resolvers call them at the edge.
 */
import type { ApiKeyPermission, EventType, PaymentMethodCode } from '../../generated/graphql/resolvers-types';

/** `multicaixa_express` → `MULTICAIXA_EXPRESS`, `coming_soon` → `COMING_SOON`, `secret` → `SECRET`. */
export function toEnumName<T extends string>(restValue: string): T {
  return restValue.toUpperCase() as T;
}

/** `MULTICAIXA_EXPRESS` → `multicaixa_express`. */
export function methodToRest(code: PaymentMethodCode): string {
  return code.toLowerCase();
}

const EVENT_TYPES: Record<EventType, string> = {
  PAYMENT_CREATED: 'payment.created',
  PAYMENT_SUCCEEDED: 'payment.succeeded',
  PAYMENT_FAILED: 'payment.failed',
  PAYMENT_UNKNOWN: 'payment.unknown',
  PAYMENT_RECONCILED: 'payment.reconciled',
  PAYMENT_EXPIRED: 'payment.expired',
  PAYMENT_CANCELLED: 'payment.cancelled',
  REFERENCE_PAID: 'reference.paid',
  REFUND_SUCCEEDED: 'refund.succeeded',
  CHECKOUT_SESSION_COMPLETED: 'checkout.session.completed',
  TEST_PING: 'test.ping',
};
const EVENT_NAMES = new Map(Object.entries(EVENT_TYPES).map(([name, rest]) => [rest, name as EventType]));

export function eventTypeToRest(type: EventType): string {
  return EVENT_TYPES[type];
}

export function eventTypeFromRest(type: string): EventType {
  const name = EVENT_NAMES.get(type);
  if (!name) throw new Error(`event type '${type}' has no GraphQL enum value`);
  return name;
}

/** `PAYMENT_INTENTS_READ` → `payment_intents:read`. */
export function permissionToRest(p: ApiKeyPermission): string {
  return p.toLowerCase().replace(/_(read|write)$/, ':$1');
}

/** `payment_intents:read` → `PAYMENT_INTENTS_READ`. */
export function permissionFromRest(p: string): ApiKeyPermission {
  return p.toUpperCase().replace(':', '_') as ApiKeyPermission;
}
