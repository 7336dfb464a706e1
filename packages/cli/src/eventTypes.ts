import { UsageError } from './errors';
import { GRAPHQL_EVENT_TYPES } from './generated/eventTypes';

/** REST spelling → GraphQL enum value (openapi.yaml's EventType, generated; schema.graphql agrees). */
export const EVENT_TYPES: Readonly<Record<string, string>> = GRAPHQL_EVENT_TYPES;

const REST_BY_ENUM = new Map(Object.entries(EVENT_TYPES).map(([rest, name]) => [name, rest]));

export function restEventType(enumName: string): string {
  return REST_BY_ENUM.get(enumName) ?? enumName.toLowerCase().replace(/_/g, '.');
}

/** `--events a,b` → the REST names (validated), or null for all; `*` means all too. */
export function parseEventTypes(list: string | undefined): string[] | null {
  if (list === undefined) return null;
  const names = list.split(',').map((s) => s.trim()).filter(Boolean);
  if (names.length === 0 || names.includes('*')) return null;
  const unknown = names.filter((n) => !(n in EVENT_TYPES));
  if (unknown.length > 0) {
    throw new UsageError(`unknown event type ${unknown.map((n) => `'${n}'`).join(', ')}; known: ${Object.keys(EVENT_TYPES).join(', ')}`);
  }
  return [...new Set(names)];
}
