import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors';
import { parse } from '../../src/graphql/graphqljs';
import { checkOperationLimits, limitWalkStats, MAX_COST, measureOperation } from '../../src/graphql/limits';
import { MAX_BYTES, MAX_ENTRIES, refusedDocumentStats, rememberRefusal, throwKnownRefusal } from '../../src/graphql/refusedDocuments';
import { buildExecutableSchema } from '../../src/graphql/schema';
import { createAccount, type TestAccount } from '../support/accounts';
import { type TestServer } from '../support/server';
import { errorCodes, gql, startGraphqlTestServer } from './support';
import { openSocket } from './rawSocket';

/**
 * Issue 54, "refuse early": the cost walk stops once the operation is over MAX_COST, so a refused
 * document costs a walk bounded by MAX_COST however many aliases it holds (proved by the nodes the walk
 * visits, limitWalkStats, not by timing: bench/profile/refusedQueryCost.ts times it), and a refused text
 * is remembered, so sending it again is answered without a walk (refusedDocuments.ts).
 */
const schema = buildExecutableSchema();

/** Each alias alone costs ~410 (Query's fields and their types' fields); `count` of them, salted. */
function aliasedTypes(count: number, salt = 'a'): string {
  const alias = '__type(name: "Query") { fields { name type { fields { name type { name kind ofType { name } } } } } }';
  return `{ ${Array.from({ length: count }, (_, i) => `${salt}${i}: ${alias}`).join(' ')} }`;
}

/** Every selection costs at least 1, and the walk stops just past MAX_COST: at most ~2 × MAX_COST nodes. */
const WALK_BOUND = 2 * MAX_COST + 2;

function refusedWalk(query: string): { error: ApiError; nodes: number } {
  const document = parse(query);
  try {
    checkOperationLimits(schema, document, undefined, {});
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { error: err, nodes: limitWalkStats().lastNodes };
  }
  throw new Error('not refused');
}

describe('the cost walk stops once over the budget', () => {
  it('visits the same bounded number of nodes for 1,000 and 4,000 aliased __type fields', () => {
    const thousand = refusedWalk(aliasedTypes(1_000, 'k'));
    const fourThousand = refusedWalk(aliasedTypes(4_000, 'f'));
    for (const { error } of [thousand, fourThousand]) {
      expect(error.code).toBe('invalid_request');
      expect(error.message).toMatch(/^Query too expensive: estimated cost at least \d+, at most 20000 is allowed/);
    }
    // Walked once and then looked up (the memo of selection sets, below): far fewer nodes than the budget.
    expect(thousand.nodes).toBeGreaterThan(100);
    expect(thousand.nodes).toBeLessThanOrEqual(WALK_BOUND);
    // Not proportional to the document: four times the aliases, the same walk.
    expect(fourThousand.nodes).toBe(thousand.nodes);
    // Each alias walked to its end, as before, would have visited about its cost: ~1.6 million for 4,000.
    const single = checkOperationLimits(schema, parse(aliasedTypes(1)), undefined, {})!;
    expect(fourThousand.nodes * 50).toBeLessThan(4_000 * single.cost);
  });

  it('walks 557 aliases of one __type selection (a 50 KB document) once, then looks them up: under 1,000 nodes', () => {
    const query = aliasedTypes(557);
    expect(query.length).toBeGreaterThan(50_000);
    const refused = refusedWalk(query);
    expect(refused.error.message).toBe(`Query too expensive: estimated cost at least ${MAX_COST + 1}, at most 20000 is allowed. Ask for fewer items (first) or fewer fields, and do not nest a type inside itself.`);
    // The first alias is walked (~350 nodes for its ~410 of cost), each next one is a look-up, and the
    // one that passes the budget is walked again part-way, over its sets already measured.
    expect(refused.nodes).toBeLessThan(1_000);
    // Without the memo the walk visits the budget: every node costs at least 1.
    expect(() => measureOperation(schema, parse(query), undefined, {}, { mayIntrospect: true }, false)).toThrow(refused.error.message);
    expect(limitWalkStats().lastNodes).toBeGreaterThan(MAX_COST);
  });

  it('bounds the walk of aliased lists and of fragments spread many times alike', () => {
    const lists = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `p${i}: paymentIntents(first: 500) { nodes { id amount status events { id type } } }`).join(' ')} }`;
    const few = refusedWalk(lists(20));
    const many = refusedWalk(lists(2_000));
    expect(many.error.message).toMatch(/too expensive/);
    expect(many.nodes).toBe(few.nodes);
    expect(many.nodes).toBeLessThanOrEqual(WALK_BOUND);
    const spreads = `{ ${Array.from({ length: 3_000 }, (_, i) => `q${i}: paymentIntents(first: 100) { nodes { ...F } }`).join(' ')} } fragment F on PaymentIntent { id amount refunds { id } }`;
    const spread = refusedWalk(spreads);
    expect(spread.error.message).toMatch(/too expensive/);
    expect(spread.nodes).toBeLessThanOrEqual(WALK_BOUND);
  });

  it('still counts every __schema field of the top level, before any walk', () => {
    const before = limitWalkStats().walks;
    const { error } = refusedWalk(`{ ${Array.from({ length: 500 }, (_, i) => `s${i}: __schema { types { name fields { name } } }`).join(' ')} }`);
    expect(error.message).toMatch(/500 __schema fields, at most 1/);
    expect(limitWalkStats().walks).toBe(before);
  });
});

describe('the refusal cache', () => {
  it('is bounded in entries and bytes', () => {
    const variant = { operationName: undefined, mayIntrospect: true };
    const error = ApiError.invalid('Query too expensive: a refusal kept for this test '.padEnd(300, '.'));
    for (let i = 0; i < MAX_ENTRIES * 3; i++) rememberRefusal(`{ bound${i} }`, variant, error);
    const stats = refusedDocumentStats();
    expect(stats.entries).toBeLessThanOrEqual(MAX_ENTRIES);
    expect(stats.bytes).toBeLessThanOrEqual(MAX_BYTES);
    // The newest are kept, the oldest went first.
    expect(() => throwKnownRefusal(`{ bound${MAX_ENTRIES * 3 - 1} }`, variant)).toThrow(/kept for this test/);
    expect(() => throwKnownRefusal('{ bound0 }', variant)).not.toThrow();
  });
});

describe('over the real gateway', () => {
  let server: TestServer;
  let acct: TestAccount;
  beforeAll(async () => {
    server = await startGraphqlTestServer();
    acct = await createAccount(server.baseUrl);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('refuses a 15 KB document of aliased __type fields with the cost error, after a bounded walk, and the second time from the cache', async () => {
    // 150 aliases, ~4,500 tokens: under MAX_TOKENS, so it is parsed and walked (~61,000 of cost).
    const query = aliasedTypes(150, 'h');
    expect(query.length).toBeGreaterThan(14_000);
    const walksBefore = limitWalkStats().walks;
    const first = await gql(server.baseUrl, acct.sk, query);
    expect(first.status).toBe(400);
    expect(errorCodes(first)).toEqual(['invalid_request']);
    expect(first.body.errors?.[0]?.message).toMatch(/^Query too expensive: estimated cost at least/);
    expect(limitWalkStats().walks).toBe(walksBefore + 1);
    expect(limitWalkStats().lastNodes).toBeLessThanOrEqual(WALK_BOUND);

    const hitsBefore = refusedDocumentStats().hits;
    const second = await gql(server.baseUrl, acct.sk, query);
    expect(second.status).toBe(400);
    expect(second.body.errors?.[0]?.message).toBe(first.body.errors?.[0]?.message);
    expect(refusedDocumentStats().hits).toBe(hitsBefore + 1);
    expect(limitWalkStats().walks).toBe(walksBefore + 1);

    // Over WebSocket, the same text is refused from the cache too, with the same error.
    const opened = await openSocket(server.baseUrl, acct.sk);
    if (!opened.ok) throw new Error('socket refused');
    opened.socket.subscribe('1', query);
    const message = await opened.socket.firstMessage('1');
    expect(message.type).toBe('error');
    expect(message.payload[0]).toMatchObject({ message: first.body.errors?.[0]?.message, extensions: { code: 'invalid_request' } });
    expect(refusedDocumentStats().hits).toBe(hitsBefore + 2);
    expect(limitWalkStats().walks).toBe(walksBefore + 1);
    opened.socket.ws.close(1000);
  });

  it('keeps refusals apart per caller kind: a publishable key is refused introspection, not served the secret key’s answer', async () => {
    const query = aliasedTypes(60, 'pk');
    expect((await gql(server.baseUrl, acct.sk, query)).status).toBe(400);
    const publishable = await gql(server.baseUrl, acct.pk, query);
    expect(publishable.status).toBe(403);
    expect(errorCodes(publishable)).toEqual(['permission_denied']);
  });

  it('does not keep a refusal that depends on a variable: the same text runs with a smaller value', async () => {
    const query = 'query($n: Int) { a: paymentIntents(first: $n) { nodes { id metadata events { id type createdAt } } } b: paymentIntents(first: $n) { nodes { id } } }';
    const refused = await gql(server.baseUrl, acct.sk, query, { n: 500 });
    expect(refused.status).toBe(400);
    expect(refused.body.errors?.[0]?.message).toMatch(/too expensive/);
    const runs = await gql(server.baseUrl, acct.sk, query, { n: 5 });
    expect(runs.status).toBe(200);
    expect(runs.body.data?.a.nodes).toEqual([]);
  });
});
