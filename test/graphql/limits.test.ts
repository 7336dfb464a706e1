import { expect, it } from 'vitest';
import { ApiError } from '../../src/errors';
import { parse } from '../../src/graphql/graphqljs';
import { checkOperationLimits, MAX_COST, MAX_DEPTH } from '../../src/graphql/limits';
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
  // refund(1) paymentIntent(2) refunds(3) paymentIntent(4) refunds(5) paymentIntent(6) refunds(7) id(8)
  const eight = '{ refund(id: "x") { ...A } } fragment A on Refund { paymentIntent { refunds { ... on Refund { paymentIntent { refunds { paymentIntent { refunds { id } } } } } } } }';
  expect(MAX_DEPTH).toBe(8);
  expect(refusal(eight)).toBeNull();
  const nine = eight.replace('refunds { id }', 'refunds { paymentIntent { id } }');
  expect(refusal(nine)?.code).toBe('invalid_request');
  expect(refusal(nine)?.message).toMatch(/9 levels/);
});

it('multiplies the cost of what sits under a list by its size, with first from literals or variables', () => {
  const query = 'query($n: Int) { paymentIntents(first: $n) { nodes { id amount status } } }';
  // 1 (paymentIntents) + n * (1 nodes + 3 fields)
  expect(refusal(query, { n: 100 })).toBeNull();
  expect(refusal(query, { n: 101 })?.message).toContain("'first'");
  expect(refusal('{ events(first: 0) { nodes { id } } }')?.code).toBe('invalid_request');
  const wide = Array.from({ length: 60 }, (_, i) => `a${i}: paymentIntents(first: 100) { nodes { id amount status } }`).join(' ');
  const err = refusal(`{ ${wide} }`);
  expect(err?.message).toMatch(/too expensive/);
  expect(err?.message).toContain(String(60 * 401));
  expect(60 * 401).toBeGreaterThan(MAX_COST);
});

it('measures each fragment once, so a fan-out of fragments is refused instead of walked 2^30 times', () => {
  const defs = Array.from({ length: 30 }, (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`).join('\n');
  const query = `{ ...F0 }\n${defs}\nfragment F30 on Query { paymentMethods { code } }`;
  const err = refusal(query);
  expect(err?.code).toBe('invalid_request');
  expect(err?.message).toMatch(/too expensive/);
});
