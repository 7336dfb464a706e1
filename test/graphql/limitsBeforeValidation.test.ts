import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors';
import { parse, validate } from '../../src/graphql/graphqljs';
import { checkOperationLimits, limitWalkStats, MAX_FRAGMENT_NESTING } from '../../src/graphql/limits';
import { buildExecutableSchema } from '../../src/graphql/schema';
import { createAccount, type TestAccount } from '../support/accounts';
import { sharedGateway, type TestServer } from '../support/server';
import { errorCodes, gql, type GraphQLResponse } from './support';
import { openSocket, type RawSocket } from './rawSocket';

/**
 * Issue 54, "refuse early": the operation limits run before graphql-js validates the document, over HTTP
 * (http.ts, with the admission) and WebSocket (ws.ts), so that a refused 50 KB document costs the
 * bounded walk and not validation. The walk then meets documents validation would refuse; it must
 * neither crash on them nor answer them in validation's place, unless they are over a limit.
 */
const schema = buildExecutableSchema();

/** Documents graphql-js's validation refuses, each with something the walk must cope with. */
const INVALID: Record<string, string> = {
  'unknown root field with a selection': '{ nope { a b { c } } }',
  'unknown field under a list': '{ paymentIntents(first: 5) { nodes { id nope { x { y } } } } }',
  'selection on a leaf': '{ account { id { x } } }',
  'inline fragment on an unknown type': '{ ... on Nope { a { b } } }',
  'fragment on an unknown type': '{ ...F } fragment F on Nope { a { b } }',
  'fragment on a scalar': '{ ...F } fragment F on String { length }',
  'unknown fragment': '{ account { ...Missing } }',
  'fragment cycle': '{ ...A } fragment A on Query { account { id } ...B } fragment B on Query { ...A }',
  'fragment spreading itself under a field': '{ paymentIntents(first: 5) { nodes { ...P } } } fragment P on PaymentIntent { id refunds { paymentIntent { ...P } } }',
  'fragment cycle inside introspection': '{ __schema { ...S } } fragment S on __Schema { types { name } ...T } fragment T on __Schema { ...S }',
  'first as a string': '{ paymentIntents(first: "x") { nodes { id } } }',
  'first as a float': '{ paymentIntents(first: 1.5) { nodes { id } } }',
  'first past 32 bits': '{ paymentIntents(first: 99999999999) { nodes { id } } }',
  'first as an object': '{ paymentIntents(first: { a: 1 }) { nodes { id } } }',
  'first as a list': '{ paymentIntents(first: [1]) { nodes { id } } }',
  'variable default of the wrong type': 'query($n: Int = "x") { paymentIntents(first: $n) { nodes { id } } }',
  '__type named by a number': '{ __type(name: 3) { name } }',
  'names of Object.prototype': '{ constructor { x } __proto__ { y } ... on toString { z } __type(name: "__proto__") { name } }',
  'two anonymous operations': '{ account { id } } { account { name } }',
};

/** graphql-js's first validation error for a text: what the gateway answered before the limits moved ahead of it. */
function validationMessage(query: string): string {
  const errors = validate(schema, parse(query));
  expect(errors.length, query).toBeGreaterThan(0);
  return errors[0]!.message;
}

/**
 * `length` fragments on `type`, each spreading the next (no field between: no depth to stop it), the
 * last selecting `last` (a cycle: spreading the first again), spread by `operation`.
 */
function fragmentChain(length: number, { type = 'Query', last = 'account { id }', operation = '{ ...F0 }' } = {}): string {
  const defs = Array.from({ length }, (_, i) => `fragment F${i} on ${type} { ...F${i + 1} }`).join(' ');
  return `${operation} ${defs} fragment F${length} on ${type} { ${last} }`;
}

/** Each alias alone costs ~410: 60 of them are over MAX_COST (refuseEarly.test.ts). */
function costlyTypes(count: number, salt: string): string {
  const alias = '__type(name: "Query") { fields { name type { fields { name type { name kind ofType { name } } } } } }';
  return Array.from({ length: count }, (_, i) => `${salt}${i}: ${alias}`).join(' ');
}

describe('the walk on documents that were not validated', () => {
  it.each(Object.entries(INVALID))('%s: measured or refused with an ApiError, never a crash', (_name, query) => {
    validationMessage(query);
    try {
      checkOperationLimits(schema, parse(query), undefined, {});
    } catch (err) {
      // Only a limit may refuse these; anything else is a crash of the walk.
      expect(err).toBeInstanceOf(ApiError);
      throw new Error(`refused by the limits instead of validation: ${(err as Error).message}`);
    }
  });

  it('walks a chain of MAX_FRAGMENT_NESTING fragments, and refuses a longer one (10,000: past the stack) with an ApiError', () => {
    expect(checkOperationLimits(schema, parse(fragmentChain(MAX_FRAGMENT_NESTING - 1)), undefined, {})).toEqual({ depth: 2, cost: 2 });
    const deep = /^Query too deep: more than 100 fragments spread inside one another/;
    expect(() => checkOperationLimits(schema, parse(fragmentChain(MAX_FRAGMENT_NESTING)), undefined, {})).toThrow(deep);
    for (const query of [fragmentChain(10_000), fragmentChain(10_000, { last: '...F0' })]) {
      let refusal: unknown;
      try {
        checkOperationLimits(schema, parse(query, { maxTokens: 200_000 }), undefined, {});
      } catch (err) {
        refusal = err;
      }
      expect(refusal).toBeInstanceOf(ApiError);
      expect((refusal as ApiError).message).toMatch(deep);
    }
    // Inside an introspection, which its own walk follows.
    const introspection = fragmentChain(150, { type: '__Schema', last: 'queryType { name }', operation: '{ __schema { ...F0 } }' });
    expect(() => checkOperationLimits(schema, parse(introspection), undefined, {})).toThrow(deep);
  });

  it('leaves an operation name that matches nothing to graphql-js', () => {
    expect(checkOperationLimits(schema, parse('query A { account { id } }'), 'B', {})).toBeNull();
  });

  it('still refuses a literal first outside its bounds that graphql-js accepts', () => {
    expect(() => checkOperationLimits(schema, parse('{ paymentIntents(first: 501) { nodes { id } } }'), undefined, {})).toThrow(/'first'.*from 1 to 500/);
  });
});

describe('over the real gateway', () => {
  let server: TestServer;
  let acct: TestAccount;
  let socket: RawSocket;
  let nextId = 0;
  beforeAll(async () => {
    server = await sharedGateway();
    acct = await createAccount(server.baseUrl);
    const opened = await openSocket(server.baseUrl, acct.sk);
    if (!opened.ok) throw new Error(`socket refused: ${JSON.stringify(opened)}`);
    socket = opened.socket;
  });
  afterAll(async () => {
    socket?.ws.close(1000);
    await server?.stop();
  });

  /** One operation over the shared socket: its first message. */
  async function overWs(query: string, variables: Record<string, unknown> = {}) {
    const id = String(++nextId);
    socket.subscribe(id, query, variables);
    return socket.firstMessage(id);
  }

  /** The spec's envelope: the status, every error with `code` (validation may give several) and the request id. */
  function expectEnvelope(res: GraphQLResponse, status: number, code: string): void {
    expect(res.status).toBe(status);
    expect(errorCodes(res).length).toBeGreaterThan(0);
    expect(new Set(errorCodes(res))).toEqual(new Set([code]));
    expect(res.body.errors?.[0]?.extensions?.request_id).toMatch(/^req_/);
    expect(res.body.data).toBeUndefined();
  }

  it.each(Object.entries(INVALID))('%s: answered with graphql-js’s validation error over HTTP and WebSocket', async (_name, query) => {
    const message = validationMessage(query);
    const http = await gql(server.baseUrl, acct.sk, query);
    expectEnvelope(http, 400, 'invalid_request');
    expect(http.body.errors?.[0]?.message).toBe(message);
    const ws = await overWs(query);
    expect(ws.type).toBe('error');
    expect(ws.payload[0]).toMatchObject({ message, extensions: { code: 'invalid_request' } });
  });

  it('answers a chain of fragments with its result, its cycle with the validation error, and one as long as the token limit lets through with the limit', async () => {
    const answered = await gql(server.baseUrl, acct.sk, fragmentChain(MAX_FRAGMENT_NESTING - 1));
    expect(answered.status).toBe(200);
    expect(answered.body.data?.account?.id).toBe(acct.id);
    const cycle = await gql(server.baseUrl, acct.sk, fragmentChain(MAX_FRAGMENT_NESTING - 1, { last: '...F0' }));
    expectEnvelope(cycle, 400, 'invalid_request');
    expect(cycle.body.errors?.[0]?.message).toMatch(/^Cannot spread fragment "F0" within itself via/);
    // Eight tokens a fragment: 600 of them are just under parseQuery.ts's MAX_TOKENS (5,000).
    for (const query of [fragmentChain(600, { last: '...F0' }), fragmentChain(600)]) {
      const refused = await gql(server.baseUrl, acct.sk, query);
      expectEnvelope(refused, 400, 'invalid_request');
      expect(refused.body.errors?.[0]?.message).toMatch(/^Query too deep: more than 100 fragments/);
    }
    // Longer, parsing stops at the token limit: the chain is never followed.
    const tooLong = await gql(server.baseUrl, acct.sk, fragmentChain(1_600));
    expectEnvelope(tooLong, 400, 'invalid_request');
    expect(tooLong.body.errors?.[0]?.message).toMatch(/^Syntax Error: Document contains more th\w+ 5000 tokens/);
  });

  /** `pgw_graphql_operations_total` of queries that failed, from the gateway's /metrics (loopback: no token). */
  async function failedQueries(): Promise<number> {
    const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
    return Number(/^pgw_graphql_operations_total\{type="query",outcome="error"\} (\d+)/m.exec(text)?.[1] ?? 0);
  }

  it('refuses a document both costly and invalid by the limits, ahead of validation, on both transports', async () => {
    const failedBefore = await failedQueries();
    const cases = [
      `{ ${costlyTypes(60, 'u')} nope }`,
      `{ ${costlyTypes(60, 'c')} ...A } fragment A on Query { ...A }`,
      `{ ${costlyTypes(60, 's')} paymentIntents(first: "x") { nodes { id } } }`,
      `{ ${costlyTypes(60, 'm')} ...Missing }`,
    ];
    for (const query of cases) {
      expect(validate(schema, parse(query)).length).toBeGreaterThan(0);
      const http = await gql(server.baseUrl, acct.sk, query);
      expectEnvelope(http, 400, 'invalid_request');
      // The cost error, not validation's: the limits ran first.
      expect(http.body.errors?.[0]?.message).toMatch(/^Query too expensive/);
      const ws = await overWs(query.replace(/([ucsm])(\d+):/g, 'w$1$2:'));
      expect(ws.type).toBe('error');
      expect(ws.payload[0]).toMatchObject({ message: expect.stringMatching(/^Query too expensive/), extensions: { code: 'invalid_request' } });
    }
    // A publishable key's introspection, invalid besides: its 403, before validation.
    const publishable = await gql(server.baseUrl, acct.pk, '{ __type(name: "Query") { name } nope }');
    expectEnvelope(publishable, 403, 'permission_denied');
    // Each HTTP refusal counted as a failed query, as when Apollo answered them.
    expect(await failedQueries()).toBe(failedBefore + cases.length + 1);
  });

  it('measures an operation once per request over HTTP: before Apollo, not again in its hook', async () => {
    const query = `{ account { id } once${Date.now()}: paymentIntents(first: 3) { nodes { id } } }`;
    const before = limitWalkStats().walks;
    const res = await gql(server.baseUrl, acct.sk, query);
    expect(res.status).toBe(200);
    expect(limitWalkStats().walks).toBe(before + 1);
  });

  it('measures a persisted query sent by its hash alone, as its text', async () => {
    const query = `query($n: Int) { a: paymentIntents(first: $n) { nodes { id metadata events { id type createdAt } } } b: paymentIntents(first: $n) { nodes { id } } }`;
    const sha256Hash = createHash('sha256').update(query).digest('hex');
    const post = async (body: Record<string, unknown>): Promise<GraphQLResponse> => {
      const res = await fetch(`${server.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${acct.sk}` },
        body: JSON.stringify({ ...body, extensions: { persistedQuery: { version: 1, sha256Hash } } }),
      });
      return { status: res.status, headers: res.headers, body: await res.json() };
    };
    expect((await post({ query, variables: { n: 5 } })).status).toBe(200);
    const byHash = await post({ variables: { n: 500 } });
    expectEnvelope(byHash, 400, 'invalid_request');
    expect(byHash.body.errors?.[0]?.message).toMatch(/^Query too expensive/);
  });
});
