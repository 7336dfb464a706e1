import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors';
import {
  getNamedType,
  getNullableType,
  isAbstractType,
  isNonNullType,
  isObjectType,
  parse,
  type DocumentNode,
  type GraphQLObjectType,
} from '../../src/graphql/graphqljs';
import { limitWalkStats, MAX_COST, measureOperation } from '../../src/graphql/limits';
import { buildExecutableSchema } from '../../src/graphql/schema';
import { mulberry32 } from '../support/random';

/**
 * Issue 54, "refuse early": the cost walk measures a selection set once per walk for its text and
 * context and looks it up where the same text comes again (limits.ts, measure and introspect). The
 * memo must change nothing but the nodes visited: on random documents full of repeated selection sets
 * (aliases, the same set at other levels, under other lists and paths, re-entering types), with `first`
 * at every value, variables, fragments and introspection, and sized so their cost lands near MAX_COST
 * (where walks stop part-way), the walk with the memo and without it accept or refuse alike: the same
 * depth and cost, or the same error code and message (whose "at least N" is the partial cost).
 */
const schema = buildExecutableSchema();
const DOCUMENTS = Number(process.env.COST_MEMO_DOCUMENTS ?? 400);
const SEED = 0x54e0;


const FIRST_VALUES = [undefined, undefined, 1, 2, 5, 20, 100, 500, '$n', '$m', 0];
const INTROSPECTIONS = [
  '__type(name: "Query") { fields { name type { fields { name type { name kind ofType { name } } } } } }',
  '__type(name: "PaymentIntent") { name fields { name args { name } type { name ofType { name } } } }',
  '__type(name: "Query") { fields { name } }',
  '__type(name: $type) { fields { name } }',
  '__type(name: "Nope") { name }',
  '__schema { types { name fields { name type { name } } } }',
  '__schema { queryType { fields { name } } }',
];

function generator(random: () => number) {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  /** Selections already made per type, reused so that the same text comes back in other places. */
  const made = new Map<string, string[]>();
  let fragments: string[] = [];

  const fieldsOf = (type: GraphQLObjectType) =>
    Object.values(type.getFields()).filter((f) => f.args.every((a) => a.name === 'id' || a.name === 'first' || !isNonNullType(a.type) || a.defaultValue !== undefined));

  function args(field: ReturnType<GraphQLObjectType['getFields']>[string]): string {
    const out: string[] = [];
    for (const arg of field.args) {
      if (arg.name === 'id') out.push('id: "pay_000000000000000000000000"');
      if (arg.name === 'first') {
        const first = pick(FIRST_VALUES);
        if (first !== undefined) out.push(`first: ${first}`);
      }
    }
    return out.length ? `(${out.join(', ')})` : '';
  }

  const MAX_SELECTION_CHARS = 200_000;

  function selection(type: GraphQLObjectType, depth: number, maxDepth: number): string {
    const known = made.get(type.name);
    if (known && random() < 0.45) return pick(known);
    const parts: string[] = [];
    // Memoised selections nest copies of copies: each selection is bounded, or a rare draw outgrows what
    // a string can hold.
    let chars = 0;
    const add = (part: string) => {
      if (chars + part.length > MAX_SELECTION_CHARS) return;
      chars += part.length + 1;
      parts.push(part);
    };
    const count = 1 + Math.floor(random() * 4);
    for (let i = 0; i < count; i++) {
      const field = pick(fieldsOf(type));
      const child = getNamedType(field.type);
      let text = field.name;
      if (isObjectType(child)) {
        if (depth >= maxDepth) continue;
        text = `${field.name}${args(field)} { ${selection(child, depth + 1, maxDepth)} }`;
      } else if (isAbstractType(child)) {
        text = `${field.name}${args(field)} { __typename }`;
      }
      const roll = random();
      const copies = roll < 0.6 ? 1 : roll < 0.9 ? 2 + Math.floor(random() * 6) : 10 + Math.floor(random() * 30);
      for (let c = 0; c < copies; c++) add(copies === 1 ? text : `x${c}: ${text}`);
    }
    if (random() < 0.08) {
      // A fragment on this type, spread here (not memoised: its text holds `...`).
      const name = `F${fragments.length}`;
      fragments.push(`fragment ${name} on ${type.name} { ${selection(type, depth, maxDepth)} }`);
      add(`...${name}`);
    }
    if (random() < 0.05) add(`... on ${type.name} { ${selection(type, depth, maxDepth)} }`);
    const text = parts.length ? parts.join(' ') : '__typename';
    if (!known) made.set(type.name, [text]);
    else if (known.length < 6) known.push(text);
    return text;
  }

  /** A unit of a few aliased fields of Query, with introspection now and then. */
  function unit(): string {
    const query = getNullableType(schema.getQueryType()!) as GraphQLObjectType;
    const body = selection(query, 1, 2 + Math.floor(random() * 7));
    return random() < 0.3 ? `${body} ${pick(INTROSPECTIONS)}` : body;
  }

  return function document(): { text: (copies: number) => string; variables: Record<string, unknown> } {
    made.clear();
    fragments = [];
    const pieces = Array.from({ length: 1 + Math.floor(random() * 3) }, unit);
    const fragmentText = fragments.join(' ');
    const variables: Record<string, unknown> = {};
    if (random() < 0.7) variables.n = pick([1, 3, 20, 100, 500, 0, null]);
    if (random() < 0.5) variables.type = pick(['Query', 'PaymentIntent', 'Nope']);
    return {
      variables,
      text: (copies) => {
        const aliased = Array.from({ length: copies }, (_, c) => pieces.map((p, i) => `u${c}_${i}: __typename ${p}`).join(' ')).join(' ');
        return `query Q($n: Int, $m: Int = ${pick([2, 50, 100])}, $type: String = "Query") { ${aliased} } ${fragmentText}`;
      },
    };
  };
}

type Outcome = { ok: { depth: number; cost: number } | null; nodes: number } | { error: string; nodes: number };

function outcome(text: string | DocumentNode, variables: Record<string, unknown>, mayIntrospect: boolean, memo: boolean): Outcome {
  const document = typeof text === 'string' ? parse(text) : text;
  try {
    const ok = measureOperation(schema, document, undefined, variables, { mayIntrospect }, memo);
    return { ok, nodes: limitWalkStats().lastNodes };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { error: `${err.code}: ${err.message}`, nodes: limitWalkStats().lastNodes };
  }
}

describe('the cost walk memo', () => {
  it(`measures ${DOCUMENTS} random documents near MAX_COST exactly as the walk without it`, () => {
    const random = mulberry32(SEED);
    const next = generator(random);
    const seen = { accepted: 0, tooExpensive: 0, other: 0, nearLimit: 0, fewerNodes: 0 };
    for (let i = 0; i < DOCUMENTS; i++) {
      const { text, variables } = next();
      if (text(1).length > 20_000) {
        i--; // reused sets under aliases can grow a document past any body limit: draw another
        continue;
      }
      // One copy's cost, then as many copies as bring the whole near MAX_COST (just under, at, or just over).
      const single = outcome(text(1), variables, true, false);
      const unitCost = 'ok' in single && single.ok ? Math.max(1, single.ok.cost) : MAX_COST;
      // Documents of at most ~30 KB (the gateway reads 64 KiB): fewer copies when one is long.
      const fit = Math.max(1, Math.floor(30_000 / text(1).length));
      const copies = Math.max(1, Math.min(fit, Math.floor(MAX_COST / unitCost) + Math.floor(random() * 3) - 1));
      const query = text(copies);
      const document = parse(query);
      const mayIntrospect = random() < 0.9;
      const plain = outcome(document, variables, mayIntrospect, false);
      const memo = outcome(document, variables, mayIntrospect, true);
      const context = `document ${i} (${copies} copies, mayIntrospect ${mayIntrospect}, variables ${JSON.stringify(variables)}): ${query.slice(0, 400)}`;
      expect({ ...memo, nodes: 0 }, context).toEqual({ ...plain, nodes: 0 });
      if (process.env.COST_MEMO_VERBOSE) console.log(i, query.length, copies, plain.nodes, memo.nodes, 'ok' in plain ? plain.ok?.cost : plain.error.slice(0, 60));
      expect(memo.nodes, context).toBeLessThanOrEqual(plain.nodes);
      if (memo.nodes < plain.nodes) seen.fewerNodes++;
      if ('ok' in plain) {
        seen.accepted++;
        if (plain.ok && plain.ok.cost > MAX_COST * 0.8) seen.nearLimit++;
      } else if (plain.error.includes('too expensive')) {
        seen.tooExpensive++;
      } else {
        seen.other++;
      }
    }
    // Every path was exercised: accepted near the limit, refused for cost (part-way walks), other refusals.
    expect(seen.accepted).toBeGreaterThan(DOCUMENTS / 10);
    expect(seen.nearLimit).toBeGreaterThan(DOCUMENTS / 20);
    expect(seen.tooExpensive).toBeGreaterThan(DOCUMENTS / 10);
    expect(seen.other).toBeGreaterThan(0);
    expect(seen.fewerNodes).toBeGreaterThan(DOCUMENTS / 4);
  });

  it('charges a set found again what a fresh walk would at that place: under another list, level or path', () => {
    // The same text `{ id amount }` under lists of different sizes, at other levels, and re-entering
    // PaymentIntent (REENTRY_FACTOR): each place prices it on its own.
    const cases = [
      '{ a: paymentIntents(first: 3) { nodes { id amount } } b: paymentIntents(first: 7) { nodes { id amount } } }',
      '{ paymentIntent(id: "pay_1") { refunds(first: 4) { id paymentIntent { refunds(first: 4) { id paymentIntent { id amount } } } } } a: paymentIntent(id: "pay_1") { id amount } }',
      `{ ${Array.from({ length: 60 }, (_, i) => `p${i}: paymentIntents(first: 100) { nodes { id amount refunds(first: 1) { id } } }`).join(' ')} }`,
    ];
    for (const query of cases) {
      expect({ ...outcome(query, {}, true, true), nodes: 0 }, query).toEqual({ ...outcome(query, {}, true, false), nodes: 0 });
    }
    // The same set on PaymentIntent at the same level, reached through Refund (refunds re-enter it: ×10)
    // and through CheckoutSession (they do not): 2 + (1 + 5 × 10) and 2 + (1 + 5), whichever comes first.
    const set = '{ refunds(first: 5) { id } }';
    const throughRefund = `refund(id: "re_1") { paymentIntent ${set} }`;
    const throughSession = `checkoutSession(id: "cs_1") { paymentIntent ${set} }`;
    for (const query of [`{ ${throughRefund} ${throughSession} }`, `{ ${throughSession} ${throughRefund} }`]) {
      expect(outcome(query, {}, true, true), query).toMatchObject({ ok: { depth: 4, cost: 2 + 51 + 2 + 6 } });
    }
  });
});
