import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from './graphqljs';

/** ISO 8601 UTC with milliseconds, like every timestamp of the REST API. */
// eslint-disable-next-line no-restricted-syntax -- a scalar's definition, never changed: the same in every schema built
export const DateTimeScalar = new GraphQLScalarType<string, string>({
  name: 'DateTime',
  serialize(value) {
    // The resources carry their timestamps already formatted (iso()): answered as they are when they are
    // exactly what toISOString() would give, without parsing and formatting each again.
    if (typeof value === 'string' && isCanonicalIso(value)) return value;
    const date = value instanceof Date ? value : new Date(String(value));
    if (Number.isNaN(date.getTime())) throw new GraphQLError(`DateTime cannot represent '${String(value)}'`);
    return date.toISOString();
  },
  parseValue(value) {
    return parseDate(value);
  },
  parseLiteral(ast) {
    if (ast.kind !== Kind.STRING) throw new GraphQLError('DateTime must be an ISO 8601 string');
    return parseDate(ast.value);
  },
});

const CANONICAL_ISO = /^(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;
const DAYS_IN_MONTH: readonly number[] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * True when `new Date(value).toISOString() === value`: the format of toISOString for years 0000 to 9999,
 * with a day that the month has (Date would roll 2026-02-30 over into March).
 */
export function isCanonicalIso(value: string): boolean {
  const m = CANONICAL_ISO.exec(value);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return Number(m[3]) <= (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!);
}

function parseDate(value: unknown): string {
  const date = typeof value === 'string' ? new Date(value) : new Date(NaN);
  if (Number.isNaN(date.getTime())) throw new GraphQLError(`DateTime must be an ISO 8601 string, got '${String(value)}'`);
  return date.toISOString();
}

/**
 * Any JSON value, passed through untouched: `metadata` inputs go to the same validator as the REST body,
 * which gives the REST error for a bad value, and event `data` is the REST object as stored.
 */
// eslint-disable-next-line no-restricted-syntax -- a scalar's definition, never changed (above)
export const JsonScalar = new GraphQLScalarType<unknown, unknown>({
  name: 'JSON',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast, variables) => literalToJson(ast, variables ?? undefined),
});

function literalToJson(ast: ValueNode, variables: Record<string, unknown> | undefined): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.NULL:
      return null;
    case Kind.ENUM:
      return ast.value;
    case Kind.LIST:
      return ast.values.map((v) => literalToJson(v, variables));
    case Kind.OBJECT: {
      const out: Record<string, unknown> = {};
      for (const field of ast.fields) {
        // Same rule as the REST body parser: these names are never legitimate keys.
        if (field.name.value === '__proto__' || field.name.value === 'constructor') {
          throw new GraphQLError(`Unknown field '${field.name.value}'`);
        }
        out[field.name.value] = literalToJson(field.value, variables);
      }
      return out;
    }
    case Kind.VARIABLE:
      return variables?.[ast.name.value];
  }
}

/**
 * An integer within JavaScript's safe range (±(2^53 − 1)), sent as a JSON number: what REST sends for an
 * integer field with no 32-bit bound (`offset_seconds`), where GraphQL's `Int` stops at 2^31 − 1.
 */
// eslint-disable-next-line no-restricted-syntax -- a scalar's definition, never changed (above)
export const SafeIntScalar = new GraphQLScalarType<number, number>({
  name: 'SafeInt',
  serialize(value) {
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new GraphQLError(`SafeInt cannot represent '${String(value)}'`);
    return value;
  },
  parseValue(value) {
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new GraphQLError(`SafeInt must be an integer from -(2^53 - 1) to 2^53 - 1, got '${String(value)}'`);
    return value;
  },
  parseLiteral(ast) {
    const value = ast.kind === Kind.INT ? Number(ast.value) : NaN;
    if (!Number.isSafeInteger(value)) throw new GraphQLError('SafeInt must be an integer from -(2^53 - 1) to 2^53 - 1');
    return value;
  },
});
