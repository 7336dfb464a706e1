import http from 'node:http';
import { createHash } from 'node:crypto';
import { buildSchema, getNamedType, isInterfaceType, isObjectType, type GraphQLField } from 'graphql';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, idempotencyKey, type TestAccount } from '../support/accounts';
import { ROOT } from '../support/processes';
import { startTestServer, type TestServer } from '../support/server';
import { collect, gql, wsClient } from '../graphql/support';
import { startReceiver, type Receiver } from '../support/receiver';
import { loadContract, type OperationSpec } from './support/contract';
import { createPayment, ok, paidReferencePayment, waitFor } from './support/fixtures';
import { rawRequest } from './support/rawHttp';

/**
 * Cross-account isolation over every route: account B's key, given the ids of account A's objects,
 * gets 404 resource_not_found everywhere (REST, SSE, GraphQL queries, mutations and subscriptions),
 * sees none of A's objects in any list, receives none of A's events on its webhook endpoint, and
 * changes nothing of A's. Routes are enumerated from openapi.yaml and schema.graphql, so a new route
 * with an id is covered (or the test says it has no fixture for it).
 */
const MARK = `AMARK${Date.now().toString(36)}`;
let server: TestServer;
let receiver: Receiver;
let a: TestAccount;
let b: TestAccount;
const A: Record<string, any> = {};
/** Every id of A's objects, and the marker written in A's free-text fields. */
let secrets: string[] = [];
const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
const contract = loadContract();
let restChecked = 0;
let gqlChecked = 0;

beforeAll(async () => {
  receiver = await startReceiver();
  server = await startTestServer({ RATE_LIMIT_PER_MINUTE: '100000' });
  [a, b] = await Promise.all([createAccount(server.baseUrl, `${MARK} account`), createAccount(server.baseUrl, 'isolation B')]);
  const api = a.api;
  A.key = await ok(api.post('/api_keys', { name: `${MARK} key`, permissions: ['events:read'] }), 201, 'A key');
  A.endpoint = await ok(api.post('/webhook_endpoints', { url: `${receiver.url}/a`, name: `${MARK} endpoint` }), 201, 'A endpoint');
  A.bEndpoint = await ok(b.api.post('/webhook_endpoints', { url: `${receiver.url}/b`, name: 'B endpoint' }), 201, 'B endpoint');
  A.pending = await createPayment(api, { amount: 7_000, currency: 'AOA', payment_method: 'multicaixa_reference', merchant_reference: `${MARK}-ref` });
  A.paid = await paidReferencePayment(api, 9_000);
  A.refund = await ok(api.post('/refunds', { payment_intent: A.paid.id, amount: 1_000 }, { idempotencyKey: idempotencyKey() }), 201, 'A refund');
  // The refund completes ~3 s later; wait, so that "unchanged" below compares with a settled state.
  await waitFor(async () => (await api.get(`/refunds/${A.refund.id}`)).body.status, (s) => s === 'SUCCEEDED');
  A.express = await createPayment(api, { amount: 3_000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000002' }, merchant_reference: `${MARK}-exp`, metadata: { note: MARK } });
  A.link = await ok(api.post('/payment_links', { amount: 4_000, description: `${MARK} link` }), 201, 'A link');
  A.session = await ok(api.post('/checkout/sessions', { amount: 4_000, merchant_reference: `${MARK}-cs` }), 201, 'A session');
  A.clientToken = await ok(api.post('/client_tokens', { payment_intent: A.express.id }), 201, 'A client token');
  const trusted = `query Trusted { account { id } } # ${MARK}`;
  A.document = (await ok(api.post('/graphql/documents', { [createHash('sha256').update(trusted).digest('hex')]: trusted }), 200, 'A trusted document')).data[0];
  const deliveries = await waitFor(async () => (await api.get(`/webhook_endpoints/${A.endpoint.id}/deliveries`)).body.data as any[], (d) => d.length > 0);
  A.delivery = deliveries[0];
  secrets = [MARK, a.id, A.key.id, A.endpoint.id, A.pending.id, A.paid.id, A.refund.id, A.express.id, A.link.id, A.link.code, A.session.id, A.delivery.id, A.clientToken.id, A.clientToken.token, A.document.id];
}, 120_000);

afterAll(async () => {
  console.log(`isolation summary: ${restChecked} REST requests and ${gqlChecked} GraphQL operations with B's key on A's objects; webhook requests received: ${receiver?.received.length}`);
  agent.destroy();
  await server?.stop();
  await receiver?.close();
});

/** A's object for a path parameter, by the route it belongs to. */
function aIdFor(op: OperationSpec, name: string): string {
  if (name === 'delivery_id') return A.delivery.id;
  const p = op.path;
  if (p.startsWith('/api_keys/')) return A.key.id;
  if (p.startsWith('/payment_intents/')) return A.pending.id;
  if (p.startsWith('/refunds/')) return A.refund.id;
  if (p.startsWith('/payment_links/')) return A.link.id;
  if (p.startsWith('/checkout/sessions/')) return A.session.id;
  if (p.startsWith('/webhook_endpoints/')) return A.endpoint.id;
  if (p.startsWith('/client_tokens/')) return A.clientToken.id;
  if (p.startsWith('/graphql/documents/')) return A.document.id;
  throw new Error(`isolation: no fixture of account A for {${name}} of ${op.operationId} (${op.path}); add one`);
}

function leaks(text: string, allowed: string[] = []): string[] {
  return secrets.filter((s) => !allowed.includes(s) && text.includes(s));
}

async function asB(method: string, p: string, body?: unknown, key = b.sk) {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method === 'POST') headers['idempotency-key'] = idempotencyKey();
  restChecked++;
  return rawRequest(server.baseUrl, { method, path: p, headers, body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)) }, agent);
}

function expectNotFound(res: { status: number; text: string }, what: string, sentIds: string[]) {
  expect(res.status, `${what}: ${res.text.slice(0, 300)}`).toBe(404);
  expect(JSON.parse(res.text).error.code, what).toBe('resource_not_found');
  // The message may name the id that was sent; nothing else of A's may appear.
  expect(leaks(res.text, sentIds), what).toEqual([]);
}

/**
 * A valid body for the operations on a path id that require one: the request must reach the lookup
 * of A's object (a 400 for a missing body would prove nothing about isolation).
 */
const VALID_BODIES: Record<string, unknown> = {
  setWebhookChaos: { duplicate: 0.5, seed: 1 },
  ackPendingWebhookEvents: { ids: ['evt_000000000000000000000000'] },
  recoverWebhookDeliveries: { since: '2020-01-01T00:00:00.000Z' },
};

describe('REST: B\'s key on A\'s ids', () => {
  const withIds = () => contract.operations.filter((op) => op.prefix === '/v1' && !op.isPublic && op.params.some((p) => p.in === 'path'));

  it('every operation with a path id answers 404 resource_not_found (SSE streams included)', async () => {
    const ops = withIds();
    expect(ops.length).toBeGreaterThanOrEqual(14);
    for (const op of ops) {
      const ids: string[] = [];
      const p = op.prefix + op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
        const id = aIdFor(op, name);
        ids.push(id);
        return id;
      });
      expectNotFound(await asB(op.method, p, VALID_BODIES[op.operationId]), `${op.operationId} ${op.method} ${p}`, ids);
    }
  });

  it('B\'s endpoint with A\'s delivery id is 404 too', async () => {
    const p = `/v1/webhook_endpoints/${A.bEndpoint.id}/deliveries/${A.delivery.id}/retry`;
    expectNotFound(await asB('POST', p), p, [A.delivery.id]);
  });

  it('ids inside request bodies are 404: refund of A\'s payment, A\'s reference paid, a QR code for A\'s link', async () => {
    expectNotFound(await asB('POST', '/v1/refunds', { payment_intent: A.paid.id, amount: 100 }), 'createRefund', [A.paid.id]);
    expectNotFound(await asB('POST', '/v1/sandbox/simulate/reference_paid', { reference: A.pending.reference.number }), 'simulateReferencePaid', []);
    expectNotFound(await asB('POST', '/v1/qr_codes', { payment_link: A.link.code }), 'createQrCode', [A.link.code]);
  });

  it('no list or account-level read of B contains anything of A\'s (cursor = A\'s id included)', async () => {
    const reads = contract.operations.filter((op) => op.prefix === '/v1' && !op.isPublic && op.method === 'GET' && !op.params.some((p) => p.in === 'path'));
    expect(reads.map((op) => op.operationId)).toEqual(expect.arrayContaining(['listPaymentIntents', 'listEvents', 'listLogs', 'listPaymentLinks', 'listWebhookEndpoints', 'listApiKeys']));
    for (const op of reads) {
      const limit = op.params.find((p) => p.name === 'limit');
      const query = limit ? `?limit=${limit.schema.maximum}` : '';
      const res = await asB('GET', `/v1${op.path}${query}`);
      expect(res.status, `${op.operationId}: ${res.text.slice(0, 200)}`).toBe(200);
      // B's request log lists the paths B itself requested, A's ids in them included.
      const own = op.operationId === 'listLogs' ? secrets.filter((x) => x !== MARK) : [];
      expect(leaks(res.text, own), op.operationId).toEqual([]);
    }
    const cursor = await asB('GET', `/v1/payment_intents?starting_after=${A.express.id}`);
    expect([200, 400, 404]).toContain(cursor.status);
    expect(leaks(cursor.text, [A.express.id])).toEqual([]);
  });
});

describe('GraphQL: B\'s key on A\'s ids', () => {
  const schema = buildSchema(readFileSync(path.join(ROOT, 'schema.graphql'), 'utf8'));
  /** Every object of A's that `nodes` is asked for (Relay's Node: any of them by id alone). */
  const aNodes = () => [A.pending.id, A.refund.id, A.link.id, A.session.id, A.endpoint.id, A.delivery.id, A.key.id, a.id];
  const argValue = (field: string, arg: string): string | string[] => {
    if (field === 'nodes') return aNodes();
    if (field === 'node') return A.pending.id;
    if (arg === 'endpointId') return A.endpoint.id;
    if (arg === 'deliveryId') return A.delivery.id;
    // Events to acknowledge on A's endpoint: any well-formed id (the endpoint is what B may not reach).
    if (arg === 'ids') return 'evt_000000000000000000000000';
    if (/clientToken/i.test(field)) return A.clientToken.id;
    if (/trustedDocument/i.test(field)) return A.document.id;
    if (/paymentIntent|PaymentIntent/.test(field)) return A.pending.id;
    if (/refund/i.test(field)) return A.refund.id;
    if (/paymentLink/i.test(field)) return A.link.id;
    if (/checkoutSession/i.test(field)) return A.session.id;
    if (/webhook/i.test(field)) return A.endpoint.id;
    if (/apiKey/i.test(field)) return A.key.id;
    throw new Error(`isolation: no fixture of account A for ${field}(${arg}); add one`);
  };
  const selection = (f: GraphQLField<unknown, unknown>) => {
    const type = getNamedType(f.type);
    // An interface (Node) has fields too: its id.
    return isObjectType(type) || isInterfaceType(type) ? `{ __typename${type.getFields().id ? ' id' : ''} }` : '';
  };
  /** Query and mutation fields whose arguments are ids (ID or ID!). */
  const idFields = (root: 'Query' | 'Mutation') => {
    const type = root === 'Query' ? schema.getQueryType()! : schema.getMutationType()!;
    return Object.values(type.getFields()).filter((f) => f.args.length > 0 && f.args.every((arg) => getNamedType(arg.type).name === 'ID'));
  };

  it.each(['Query', 'Mutation'] as const)('every %s field taking ids answers resource_not_found with no data', async (root) => {
    const fields = idFields(root);
    expect(fields.length).toBeGreaterThanOrEqual(root === 'Query' ? 4 : 7);
    for (const f of fields) {
      const args = f.args.map((arg) => `${arg.name}: ${JSON.stringify(argValue(f.name, arg.name))}`).join(', ');
      const doc = `${root === 'Query' ? 'query' : 'mutation'} { ${f.name}(${args}) ${selection(f)} }`;
      gqlChecked++;
      const res = await gql(server.baseUrl, b.sk, doc);
      const codes = (res.body.errors ?? []).map((e) => e.extensions?.code);
      // `nodes` answers a list: null at every one of A's ids, each with its error.
      const asked = f.name === 'nodes' ? aNodes() : [null];
      expect(f.name === 'nodes' ? res.body.data?.nodes : [res.body.data?.[f.name] ?? null], doc).toEqual(asked.map(() => null));
      expect(codes, `${doc}: ${JSON.stringify(res.body)}`).toEqual(asked.map(() => 'resource_not_found'));
      expect(leaks(JSON.stringify(res.body), f.args.flatMap((arg) => argValue(f.name, arg.name))), doc).toEqual([]);
    }
  });

  it('mutations with A\'s ids in their input answer resource_not_found', async () => {
    const docs = [
      `mutation { createRefund(input: { paymentIntent: "${A.paid.id}", amount: 100 }, idempotencyKey: "${idempotencyKey()}") { id } }`,
      `mutation { simulateReferencePaid(input: { reference: "${A.pending.reference.number}" }) { id } }`,
      `mutation { createQrCode(input: { paymentLink: "${A.link.code}" }) { id } }`,
    ];
    for (const doc of docs) {
      gqlChecked++;
      const res = await gql(server.baseUrl, b.sk, doc);
      expect((res.body.errors ?? []).map((e) => e.extensions?.code), `${doc}: ${JSON.stringify(res.body)}`).toEqual(['resource_not_found']);
      expect(res.body.data ?? null).toBeNull();
    }
  });

  it('no list of B contains anything of A\'s', async () => {
    const doc = `{ paymentIntents(first: 100) { edges { node { id merchantReference metadata } } }
      paymentLinks { id description } webhookEndpoints { id name } events(first: 100) { edges { node { id data } } }
      apiKeys { id name } account { id name } }`;
    gqlChecked++;
    const res = await gql(server.baseUrl, b.sk, doc);
    expect(res.body.errors ?? []).toEqual([]);
    expect(leaks(JSON.stringify(res.body))).toEqual([]);
    // B's request log lists the paths B itself requested (A's ids among them), nothing else of A's.
    const logs = await gql(server.baseUrl, b.sk, '{ logs(first: 100) { path method status } }');
    expect(logs.body.errors ?? []).toEqual([]);
    expect(leaks(JSON.stringify(logs.body), secrets.filter((x) => x !== MARK))).toEqual([]);
  });

  it('subscription paymentIntentUpdated(A\'s id) with B\'s key gets an error, never A\'s data', async () => {
    const client = wsClient(server.baseUrl, b.sk);
    try {
      const messages = await collect(client, `subscription { paymentIntentUpdated(id: "${A.express.id}") { snapshot paymentIntent { id merchantReference } } }`, {}, (m) => m.length >= 1, 15_000);
      expect(messages[0]?.errors?.[0]?.extensions?.code).toBe('resource_not_found');
      expect(messages.some((m) => m.data)).toBe(false);
      expect(leaks(JSON.stringify(messages), [A.express.id])).toEqual([]);
    } finally {
      await client.dispose();
    }
  });

  it('subscription events with B\'s key carries B\'s events and none of A\'s', async () => {
    const client = wsClient(server.baseUrl, b.sk);
    try {
      const bReady = `BREADY${Date.now().toString(36)}`;
      const bMark = `BMARK${Date.now().toString(36)}`;
      const messages: unknown[] = [];
      const failed: unknown[] = [];
      const unsubscribe = client.subscribe(
        { query: 'subscription { events { id type data } }' },
        { next: (m) => void messages.push(m), error: (e) => void failed.push(e), complete: () => undefined },
      );
      const received = (mark: string) =>
        waitFor(async () => JSON.stringify([messages, failed]), (text) => text.includes(mark) || failed.length > 0, 30_000, 50);
      try {
        // One of B's own events arriving says the subscription is live before A's events happen (the
        // protocol acknowledges no subscribe, and events are not replayed): B pays until one arrives.
        let probes = 0;
        await waitFor(
          async () => {
            await createPayment(b.api, { amount: 500, currency: 'AOA', payment_method: 'multicaixa_reference', merchant_reference: `${bReady}-${++probes}` });
            return JSON.stringify([messages, failed]);
          },
          (text) => text.includes(bReady) || failed.length > 0,
          30_000,
          100,
        );
        await createPayment(a.api, { amount: 500, currency: 'AOA', payment_method: 'multicaixa_reference', merchant_reference: `${MARK}-sub` });
        await ok(a.api.post(`/webhook_endpoints/${A.endpoint.id}/test`), 202, 'A ping');
        await createPayment(b.api, { amount: 500, currency: 'AOA', payment_method: 'multicaixa_reference', merchant_reference: bMark });
        await received(bMark);
      } finally {
        unsubscribe();
      }
      expect(failed).toEqual([]);
      expect(JSON.stringify(messages)).toContain(bMark);
      expect(leaks(JSON.stringify(messages))).toEqual([]);
    } finally {
      await client.dispose();
    }
  });
});

describe('nothing of A\'s changed, nothing of A\'s reached B', () => {
  it('B\'s sandbox clock advance fires none of A\'s timers', async () => {
    const before = await ok(a.api.get('/sandbox/clock'), 200, 'A clock');
    await ok(b.api.post('/sandbox/clock/advance', { seconds: 80 * 3600 }), 200, 'B advance');
    const pending = await ok(a.api.get(`/payment_intents/${A.pending.id}`), 200, 'A pending');
    expect(pending.status).toBe('PENDING');
    const after = await ok(a.api.get('/sandbox/clock'), 200, 'A clock');
    expect(after.offset_seconds).toBe(before.offset_seconds);
  });

  it('A\'s objects are as A left them after all of B\'s attempts', async () => {
    expect((await ok(a.api.get(`/payment_intents/${A.pending.id}`), 200, 'pending')).status).toBe('PENDING');
    expect((await ok(a.api.get(`/payment_intents/${A.paid.id}`), 200, 'paid')).amount_refunded).toBe(1_000);
    expect((await ok(a.api.get(`/payment_links/${A.link.id}`), 200, 'link')).active).toBe(true);
    const endpoints = await ok(a.api.get('/webhook_endpoints'), 200, 'endpoints');
    expect(endpoints.data.map((e: any) => e.id)).toContain(A.endpoint.id);
    const keys = await ok(a.api.get('/api_keys'), 200, 'keys');
    expect(keys.data.find((k: any) => k.id === A.key.id)?.revoked_at).toBeNull();
    // B's rotate_secret attempts did not rotate A's secret: a new delivery carries one signature only.
    const ping = await ok(a.api.post(`/webhook_endpoints/${A.endpoint.id}/test`), 202, 'A ping');
    const [req] = await receiver.waitFor((r) => r.headers['service-event-id'] === ping.event_id);
    expect(String(req!.headers['service-signature']).match(/v1=/g)).toHaveLength(1);
  });

  it('B\'s webhook endpoint received B\'s events and none of A\'s', async () => {
    const aEvents = await ok(a.api.get('/events?limit=100'), 200, 'A events');
    // Wait until A's endpoint has every event of A (so B's would have had time to get them too).
    const aIds = new Set<string>(aEvents.data.map((e: any) => e.id));
    await waitFor(
      async () => new Set(receiver.received.filter((r) => r.path === '/a').map((r) => String(r.headers['service-event-id']))),
      (got) => [...aIds].every((id) => got.has(id)),
    );
    const toB = receiver.received.filter((r) => r.path === '/b');
    expect(toB.length).toBeGreaterThan(0);
    for (const r of toB) {
      expect(aIds.has(String(r.headers['service-event-id']))).toBe(false);
      expect(leaks(r.rawBody)).toEqual([]);
    }
  });
});
