import { expect, it } from 'vitest';
import { ApiError } from '../../src/errors';
import { parse } from '../../src/graphql/graphqljs';
import { getNamedType, getNullableType, isCompositeType, isListType, isObjectType, type GraphQLObjectType } from '../../src/graphql/graphqljs';
import { checkOperationLimits, MAX_COST, MAX_DEPTH, PAGINATED_FIELDS, pageBounds } from '../../src/graphql/limits';
import { LIST_BOUNDS, NESTED_PAGES } from '../../src/graphql/listBounds';
import { parameterSchema } from '../../src/operations/contract';
import { buildExecutableSchema } from '../../src/graphql/schema';

/** The depth / cost / `first` rules on their own. */
const schema = buildExecutableSchema();

function refusal(query: string, variables: Record<string, unknown> = {}): ApiError | null {
  try {
    checkOperationLimits(schema, parse(query), undefined, variables);
    return null;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
}

it('counts depth through fragments and inline fragments, and allows exactly MAX_DEPTH', () => {
  // events(1) edges(2) node(3) refund(4) paymentIntent(5) refunds(6) paymentIntent(7) id(8)
  const eight =
    '{ events(first: 1) { ...A } } fragment A on EventConnection { edges { node { refund { ... on Refund { paymentIntent { refunds(first: 1) { paymentIntent { id } } } } } } } }';
  expect(MAX_DEPTH).toBe(8);
  expect(refusal(eight)).toBeNull();
  const nine = eight.replace('paymentIntent { id }', 'paymentIntent { customer { mobile } }');
  expect(refusal(nine)?.code).toBe('invalid_request');
  expect(refusal(nine)?.message).toMatch(/too deep: more than 8 levels/);
});

it('multiplies the cost of what sits under a list by its size, with first from literals or variables', () => {
  const query = 'query($n: Int) { paymentIntents(first: $n) { nodes { id amount status } } }';
  // 1 (paymentIntents) + n * (1 nodes + 3 fields)
  expect(refusal(query, { n: 500 })).toBeNull();
  expect(refusal(query, { n: 501 })?.message).toContain("'first'");
  expect(refusal(query, { n: 501 })?.message).toContain('from 1 to 500');
  expect(refusal('{ events(first: 0) { nodes { id } } }')?.code).toBe('invalid_request');
  const wide = Array.from({ length: 60 }, (_, i) => `a${i}: paymentIntents(first: 100) { nodes { id amount status } }`).join(' ');
  const err = refusal(`{ ${wide} }`);
  expect(err?.message).toMatch(/too expensive/);
  // The walk stops once past MAX_COST: at the 50th copy (49 × 401 fits), and says what it counted so far.
  expect(60 * 401).toBeGreaterThan(MAX_COST);
  expect(49 * 401).toBeLessThanOrEqual(MAX_COST);
  expect(err?.message).toContain(`estimated cost at least ${50 * 401},`);
});

it('remembers a document within the limits, and measures it again for other variables, another operation or caller', () => {
  const text = `query A($n: Int, $m: Int = 100) { paymentIntents(first: $n) { nodes { id amount status } } events(first: $m) { nodes { id } } }
    query B { __schema { queryType { name } } }`;
  const document = parse(text);
  const fresh = (operation: string, variables: Record<string, unknown>) => checkOperationLimits(schema, parse(text), operation, variables);
  expect(checkOperationLimits(schema, document, 'A', { n: 20 })).toEqual(fresh('A', { n: 20 }));
  expect(checkOperationLimits(schema, document, 'A', { n: 20 })).toEqual(fresh('A', { n: 20 }));
  // 1 + 20 × 4, then 1 + 100 × 2 (the variable's default).
  expect(checkOperationLimits(schema, document, 'A', { n: 20 })?.cost).toBe(81 + 201);
  // Another value of a variable the limits read: measured again, and refused when over them.
  expect(checkOperationLimits(schema, document, 'A', { n: 500 })?.cost).toBe(2001 + 201);
  expect(() => checkOperationLimits(schema, document, 'A', { n: 501 })).toThrow(/'first'/);
  // Left out, $m is its default (100); given as null, the field's (20).
  expect(checkOperationLimits(schema, document, 'A', { n: 20, m: null })?.cost).toBe(81 + 41);
  expect(() => checkOperationLimits(schema, document, 'A', { n: 20, m: 101 })).toThrow(/'first'/);
  // The other operation of the document, then the same one for a caller who may not introspect.
  expect(checkOperationLimits(schema, document, 'B', {}, { mayIntrospect: true })).toEqual(fresh('B', {}));
  expect(() => checkOperationLimits(schema, document, 'B', {}, { mayIntrospect: false })).toThrow(/publishable key cannot introspect/);
});

it('measures each fragment once, so a fan-out of fragments is refused instead of walked 2^30 times', () => {
  const defs = Array.from({ length: 30 }, (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`).join('\n');
  const query = `{ ...F0 }\n${defs}\nfragment F30 on Query { paymentMethods { code } }`;
  const err = refusal(query);
  expect(err?.code).toBe('invalid_request');
  expect(err?.message).toMatch(/too expensive/);
});

it('bounds every `first` by the `limit` of the REST list it mirrors, or by NESTED_PAGES, default included', () => {
  const withFirst = Object.values(schema.getTypeMap())
    .filter(isObjectType)
    .flatMap((t) => Object.values(t.getFields()).filter((f) => f.args.some((a) => a.name === 'first')).map((f) => ({ coordinate: `${t.name}.${f.name}`, field: f })));
  expect(withFirst.map((f) => f.coordinate).sort()).toEqual([...Object.keys(PAGINATED_FIELDS), ...Object.keys(NESTED_PAGES)].sort());
  for (const { coordinate, field } of withFirst) {
    const operationId = PAGINATED_FIELDS[coordinate];
    const limit = operationId ? parameterSchema(operationId, 'query', 'limit') : undefined;
    const expected = limit ? { min: limit.minimum, max: limit.maximum, default: limit.default } : NESTED_PAGES[coordinate];
    expect(pageBounds(coordinate), coordinate).toEqual(expected);
    // schema.graphql's default is the same.
    expect(field.args.find((a) => a.name === 'first')!.defaultValue, coordinate).toBe(expected!.default);
    expect(getNamedType(field.args.find((a) => a.name === 'first')!.type).name).toBe('Int');
  }
  expect(pageBounds('Query.paymentIntents').max).toBe(500);
  expect(pageBounds('Query.events').max).toBe(100);
  expect(pageBounds('PaymentIntent.refunds')).toEqual({ min: 1, max: 100, default: 20 });
});

it('prices a QR code above a stored field: the 100 links of paymentLinks with their QR fit once, not twice', () => {
  const once = '{ paymentLinks { id qrSvg } }';
  expect(refusal(once)).toBeNull();
  const twice = '{ a: paymentLinks { id qrSvg } b: paymentLinks { id qrSvg } }';
  expect(refusal(twice)?.message).toMatch(/too expensive/);
  // The same aliases without the QR codes are cheap.
  expect(refusal('{ a: paymentLinks { id code } b: paymentLinks { id code } }')).toBeNull();
});

it('bounds every list of objects in the schema: a `first`, a LIST_BOUNDS entry, or a connection cut by its `first`', () => {
  const unbounded = Object.values(schema.getTypeMap())
    .filter((t) => isObjectType(t) && !t.name.startsWith('__'))
    .flatMap((t) => Object.values((t as GraphQLObjectType).getFields()).map((f) => ({ coordinate: `${t.name}.${f.name}`, field: f, parent: t.name })))
    .filter(({ field }) => isListType(getNullableType(field.type)) && isCompositeType(getNamedType(field.type)))
    .filter(({ coordinate, field, parent }) => !(coordinate in LIST_BOUNDS) && !field.args.some((a) => a.name === 'first') && !parent.endsWith('Connection'));
  expect(unbounded.map((u) => u.coordinate)).toEqual([]);
  expect(Object.keys(LIST_BOUNDS).length).toBeGreaterThan(0);
});
