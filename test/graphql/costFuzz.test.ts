import { getNamedType, isCompositeType, isObjectType, type GraphQLObjectType } from '../../src/graphql/graphqljs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { buildExecutableSchema } from '../../src/graphql/schema';
import { createAccount, idempotencyKey, type TestAccount } from '../support/accounts';
import { type TestServer } from '../support/server';
import { sharedGateway } from '../support/server';
import { mulberry32 } from '../support/random';

/**
 * Issue 16: random nested and aliased queries built from schema.graphql (seeded, so a failure replays),
 * sent to the real gateway over data with long lists (a payment with 15 refunds). Whatever the cost
 * limit accepts must answer under the response cap (GRAPHQL_MAX_RESPONSE_BYTES, default 1 MiB), and no
 * query, accepted or not, may get a 500 or an internal_error.
 */
const QUERIES = 200;
const SEED = 0x16c057;
const MAX_RESPONSE_BYTES = loadConfig({}).graphqlMaxResponseBytes;

let server: TestServer;
let acct: TestAccount;
/** A real id for each field that takes one, so nested lists have something to return. */
const ids: Record<string, string> = {};

beforeAll(async () => {
  server = await sharedGateway({ RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_PER_ACCOUNT_PER_MINUTE: '100000' });
  acct = await createAccount(server.baseUrl);
  const paid = await acct.api.post('/payment_intents', { amount: 100_000, currency: 'AOA', payment_method: 'multicaixa_reference', metadata: { order: 'o-1' } }, { idempotencyKey: idempotencyKey() });
  await acct.api.post('/sandbox/simulate/reference_paid', { reference: paid.body.reference.number });
  for (let i = 0; i < 15; i++) {
    const refund = await acct.api.post('/refunds', { payment_intent: paid.body.id, amount: 100 }, { idempotencyKey: idempotencyKey() });
    ids.refund = refund.body.id;
  }
  for (let i = 0; i < 5; i++) await acct.api.post('/payment_intents', { amount: 2_000 + i, currency: 'AOA', payment_method: 'multicaixa_reference' }, { idempotencyKey: idempotencyKey() });
  ids.paymentIntent = paid.body.id;
  ids.paymentLink = (await acct.api.post('/payment_links', { amount: 5_000, description: 'fuzz' })).body.id;
  ids.checkoutSession = (await acct.api.post('/checkout_sessions', { amount: 5_000 })).body.id;
  ids.webhookEndpoint = (await acct.api.post('/webhook_endpoints', { url: 'http://127.0.0.1:9/hook' })).body.id;
  await acct.api.post('/api_keys', { name: 'fuzz', permissions: ['events:read'] });
});
afterAll(async () => {
  await server?.stop();
});


const schema = buildExecutableSchema();
const FIRST_VALUES = [undefined, 1, 3, 20, 100, 101, 500, 0, '$n'];

function generator(random: () => number) {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  let variableUsed = false;

  function args(field: ReturnType<GraphQLObjectType['getFields']>[string]): string {
    const out: string[] = [];
    for (const arg of field.args) {
      if (arg.name === 'id') out.push(`id: "${ids[field.name] ?? 'pay_000000000000000000000000'}"`);
      if (arg.name === 'first') {
        const first = pick(FIRST_VALUES);
        if (first === '$n') variableUsed = true;
        if (first !== undefined) out.push(`first: ${first}`);
      }
    }
    return out.length ? `(${out.join(', ')})` : '';
  }

  function selection(type: GraphQLObjectType, depth: number, maxDepth: number): string {
    const fields = Object.values(type.getFields()).filter((f) => f.args.every((a) => ['id', 'first', 'after', 'status', 'type'].includes(a.name)));
    const parts: string[] = [];
    const count = 1 + Math.floor(random() * 4);
    for (let i = 0; i < count; i++) {
      const field = pick(fields);
      const child = getNamedType(field.type);
      let text: string;
      if (isCompositeType(child) && isObjectType(child)) {
        if (depth >= maxDepth) continue;
        text = `${field.name}${args(field)} { ${selection(child, depth + 1, maxDepth)} }`;
      } else {
        text = field.name;
      }
      // Aliases: usually none, sometimes a few, now and then a hundred.
      const roll = random();
      const copies = roll < 0.7 ? 1 : roll < 0.95 ? 2 + Math.floor(random() * 8) : 50 + Math.floor(random() * 100);
      for (let c = 0; c < copies; c++) parts.push(copies === 1 ? text : `a${depth}_${i}_${c}: ${text}`);
    }
    if (random() < 0.1) parts.push('__typename');
    return parts.length ? parts.join(' ') : '__typename';
  }

  return function query(): string {
    variableUsed = false;
    const body = selection(schema.getQueryType()!, 1, 2 + Math.floor(random() * 8));
    const introspection = random() < 0.08 ? pick(['__schema { types { name fields { name } } }', '__type(name: "PaymentIntent") { fields { name type { name ofType { name } } } }']) : '';
    const header = variableUsed ? `query Fuzz($n: Int = ${pick([1, 20, 100, 500])})` : 'query Fuzz';
    return `${header} { ${body} ${introspection} }`;
  };
}

it(`answers ${QUERIES} random nested and aliased queries without a 500, each accepted one under the response cap`, async () => {
  const next = generator(mulberry32(SEED));
  // Only documents the body limit lets through (MAX_BODY_BYTES answers 413 before GraphQL reads them).
  const queries: string[] = [];
  while (queries.length < QUERIES) {
    const query = next();
    if (query.length < 60_000) queries.push(query);
  }
  const outcomes = { accepted: 0, refused: 0 };
  const check = async (query: string) => {
    const res = await fetch(`${server.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${acct.sk}` },
      body: JSON.stringify({ query }),
    });
    const text = await res.text();
    const body = JSON.parse(text) as { data?: unknown; errors?: Array<{ extensions?: { code?: string } }> };
    const context = `${res.status} for ${query.slice(0, 300)}: ${text.slice(0, 300)}`;
    expect([200, 400], context).toContain(res.status);
    expect(body.errors?.map((e) => e.extensions?.code) ?? [], context).not.toContain('internal_error');
    expect(Buffer.byteLength(text), context).toBeLessThanOrEqual(MAX_RESPONSE_BYTES);
    if (res.status === 200) {
      // Executed: data, or null where a field's error reached the root through non-null fields (a push
      // endpoint's pendingEvents under webhookEndpoints: [WebhookEndpoint!]!), then with that error.
      expect(body, context).toHaveProperty('data');
      if (body.data === null) expect(body.errors?.length, context).toBeGreaterThan(0);
      outcomes.accepted++;
    } else {
      expect(body.errors?.[0]?.extensions?.code, context).toBe('invalid_request');
      outcomes.refused++;
    }
  };
  // Four at a time: enough to overlap, little enough for a loaded machine.
  for (let i = 0; i < queries.length; i += 4) await Promise.all(queries.slice(i, i + 4).map(check));
  // Both paths were exercised.
  expect(outcomes.accepted).toBeGreaterThan(QUERIES / 4);
  expect(outcomes.refused).toBeGreaterThan(QUERIES / 20);
});
