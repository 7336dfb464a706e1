/**
 * GraphQL enum names ↔ the REST spellings the domain uses. GraphQL enum values must be names
 * (`MULTICAIXA_EXPRESS`, `PAYMENT_SUCCEEDED`, `PAYMENT_INTENTS_READ`), the domain speaks the contract's
 * values (`multicaixa_express`, `payment.succeeded`, `payment_intents:read`). These are the only
 * conversions; resolvers call them at the edge.
 */
import type { ApiKeyPermission, EventType, PaymentMethodCode } from '../../generated/graphql/resolvers-types';
import { EVENT_TYPES as REST_EVENT_TYPES, GRAPHQL_EVENT_TYPES } from '../../generated/eventTypes';

/** `multicaixa_express` → `MULTICAIXA_EXPRESS`, `coming_soon` → `COMING_SOON`, `secret` → `SECRET`. */
export function toEnumName<T extends string>(restValue: string): T {
  return restValue.toUpperCase() as T;
}

/** `MULTICAIXA_EXPRESS` → `multicaixa_express`. */
export function methodToRest(code: PaymentMethodCode): string {
  return code.toLowerCase();
}

/** The contract's event types by their GraphQL name (codegen checks schema.graphql's enum is exactly these). */
const EVENT_TYPES = Object.fromEntries(REST_EVENT_TYPES.map((rest) => [GRAPHQL_EVENT_TYPES[rest], rest])) as Record<EventType, string>;
const EVENT_NAMES: ReadonlyMap<string, EventType> = new Map(Object.entries(EVENT_TYPES).map(([name, rest]) => [rest, name as EventType]));

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
