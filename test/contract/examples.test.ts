// The examples of openapi.yaml against real answers: every response example of every operation (and the
// outbound webhook's body examples) has the shape of an answer the gateway really gave during this test —
// same fields, same JSON types, same enum members; free values (ids, amounts, times, names) may differ.
// The examples are what integrators read first on the docs page: they must not drift from the code.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MongoClient } from 'mongodb';
import { parse as parseYaml } from 'yaml';
import { findOperation } from '../../src/operations/contract';
import { createAccount, idempotencyKey, type TestAccount } from '../support/accounts';
import { ApiClient, findRootOperation, type ApiResponse, type RequestOptions } from '../support/client';
import { spawnEngine, spawnGateway, ROOT, type EngineProcess, type GatewayProcess } from '../support/processes';
import { startTestServer, type TestServer } from '../support/server';
import { nonLoopbackIPv4, viaAddress } from '../support/peers';
import { ShapeComparer, type Schema } from '../support/shapes';
import { waitFor } from '../support/wait';
import { startGatewayWithJobs } from '../links/support/gateway';
import { startReceiver, type Receiver } from '../support/receiver';
import { openSse, type SseMessage } from '../streams/support/sseClient';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 240_000 });

const doc = parseYaml(readFileSync(path.join(ROOT, 'openapi.yaml'), 'utf8')) as Schema;
const shapes = new ShapeComparer(doc);
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** What the `data:` lines of each event stream carry (the media type's own schema is a plain string). */
const SSE_DATA: Record<string, string> = {
  streamPaymentIntentEvents: 'PaymentIntent',
  streamPublicPaymentEvents: 'PublicPaymentIntent',
};

// ----- the examples ------------------------------------------------------------------------------------

interface ExampleSite {
  /** Where the example is written in openapi.yaml. */
  label: string;
  media: string;
  schema: Schema | undefined;
  example: unknown;
  /** Keys of the real answers (`<operationId> <status>`, or `webhook <name>`) it is compared with. */
  answerKeys: string[];
  /** For event streams: the operation (to find SSE_DATA). */
  operationId?: string;
}

function deref(value: Schema): Schema {
  let cur = value;
  while (typeof cur?.$ref === 'string') cur = (cur.$ref as string).slice(2).split('/').reduce<any>((acc, k) => acc?.[k], doc);
  return cur;
}

function examplesOf(media: Schema): [string, unknown][] {
  const out: [string, unknown][] = [];
  if ('example' in media) out.push(['example', media.example]);
  for (const [name, ex] of Object.entries<Schema>(media.examples ?? {})) out.push([`examples.${name}`, deref(ex).value]);
  return out;
}

function collectSites(): ExampleSite[] {
  const sites: ExampleSite[] = [];
  // A reusable response (components.responses.X) holds one example for every operation using it: it is
  // compared with the real answers of that status of all those operations.
  const sharedUsers = new Map<string, string[]>();
  for (const [p, item] of Object.entries<Schema>(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method] as Schema | undefined;
      if (!op) continue;
      for (const [status, raw] of Object.entries<Schema>(op.responses ?? {})) {
        const answerKey = `${op.operationId} ${status}`;
        const shared = typeof raw.$ref === 'string' ? /^#\/components\/responses\/(.+)$/.exec(raw.$ref)?.[1] : undefined;
        if (shared) {
          sharedUsers.set(shared, [...(sharedUsers.get(shared) ?? []), answerKey]);
          continue;
        }
        for (const [media, m] of Object.entries<Schema>(deref(raw).content ?? {})) {
          for (const [name, example] of examplesOf(m)) {
            sites.push({
              label: `${method.toUpperCase()} ${p} (${op.operationId}) ${status} ${media} ${name}`,
              media,
              schema: m.schema,
              example,
              answerKeys: [answerKey],
              operationId: op.operationId,
            });
          }
        }
      }
    }
  }
  for (const [shared, users] of [...sharedUsers].sort(([a], [b]) => a.localeCompare(b))) {
    for (const [media, m] of Object.entries<Schema>(doc.components.responses[shared].content ?? {})) {
      for (const [name, example] of examplesOf(m)) {
        sites.push({ label: `components.responses.${shared} ${media} ${name} (${users.length} operations)`, media, schema: m.schema, example, answerKeys: users });
      }
    }
  }
  for (const [hook, item] of Object.entries<Schema>(doc.webhooks ?? {})) {
    for (const [media, m] of Object.entries<Schema>(deref(item.post?.requestBody ?? {}).content ?? {})) {
      for (const [name, example] of examplesOf(m)) {
        sites.push({ label: `webhooks.${hook} request body ${media} ${name}`, media, schema: m.schema, example, answerKeys: [`webhook ${hook}`] });
      }
    }
  }
  return sites;
}

const outside = nonLoopbackIPv4();
if (!outside) console.warn('\n\n*** SKIPPED in test/contract/examples.test.ts: the GET /metrics 403 example (this machine has no non-loopback IPv4 address) ***\n\n');
const sites = collectSites().filter((s) => outside || !s.answerKeys.includes('getMetrics 403'));

// ----- the real answers --------------------------------------------------------------------------------

interface Answer {
  media: string;
  /** Parsed JSON, the raw text (HTML, SVG, YAML), or the messages of an event stream. */
  body: unknown;
  where: string;
}
const answers = new Map<string, Answer[]>();

function record(key: string, answer: Answer): void {
  answers.set(key, [...(answers.get(key) ?? []), answer]);
}

/** A request through the contract-checking client, its answer recorded under its operation and status. */
async function call(client: ApiClient, method: string, p: string, opts: RequestOptions = {}): Promise<ApiResponse> {
  const res = await client.request(method, p, opts);
  const pathname = p.split('?')[0]!;
  const op = opts.root ? findRootOperation(method, pathname) : findOperation(method, pathname.replace(/^\/v1/, ''));
  if (!op) throw new Error(`${method} ${p} is no operation of openapi.yaml`);
  const media = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
  record(`${op.operationId} ${res.status}`, { media, body: res.body, where: `${method} ${p}` });
  return res;
}

async function ok(client: ApiClient, method: string, p: string, status: number, opts: RequestOptions = {}): Promise<any> {
  const res = await call(client, method, p, opts);
  expect(res.status, `${method} ${p}: ${res.text.slice(0, 500)}`).toBe(status);
  return res.body;
}

/**
 * Watches a new payment's stream from its snapshot to its end. `create` makes the payment (in the state
 * the snapshot should show); `during` drives it to a final state. The rail also moves on real time (+2 s,
 * +5 s), so on a slow machine the snapshot can come too late: then it starts over with a new payment.
 */
async function stream(
  baseUrl: string,
  operationId: string,
  key: string | null,
  create: () => Promise<any>,
  snapshotStatus: string,
  during: () => Promise<void>,
): Promise<any> {
  for (let attempt = 1; ; attempt++) {
    const payment = await create();
    const p = `${operationId === 'streamPublicPaymentEvents' ? '/public/payments' : '/payment_intents'}/${payment.id}/events`;
    const sse = await openSse(`${baseUrl}/v1${p}`, key ? { authorization: `Bearer ${key}` } : {});
    expect(sse.status, sse.text).toBe(200);
    await sse.waitFor((m) => m.length >= 1);
    if (JSON.parse(sse.messages[0]!.data).status !== snapshotStatus && attempt < 3) {
      sse.close();
      continue;
    }
    await during();
    await Promise.race([sse.ended, new Promise((r) => setTimeout(r, 20_000))]);
    sse.close();
    expect(sse.isEnded(), `${p}: the stream closes once the payment is final`).toBe(true);
    record(`${operationId} 200`, { media: 'text/event-stream', body: sse.messages, where: `GET ${p}` });
    return payment;
  }
}

/** Drives every operation of the contract once (and the errors its reusable responses describe). */
async function driveMainGateway(server: TestServer, receiver: Receiver): Promise<void> {
  const base = server.baseUrl;
  const anon = new ApiClient(base);
  const account = await ok(anon, 'POST', '/sandbox/accounts', 201, { body: { name: 'Loja Kianda', email: 'dev@kianda.example' } });
  const api = new ApiClient(base, account.sk);
  const pkClient = new ApiClient(base, account.pk);
  const idem = () => ({ idempotencyKey: idempotencyKey() });

  // Root routes.
  await ok(anon, 'GET', '/healthz', 200, { root: true });
  await ok(anon, 'GET', '/readyz', 200, { root: true });
  await ok(anon, 'GET', '/metrics', 200, { root: true });
  await ok(anon, 'GET', '/openapi.json', 200, { root: true });
  await ok(anon, 'GET', '/openapi.yaml', 200, { root: true });
  await ok(anon, 'GET', '/docs', 200, { root: true });

  // Account, clock, methods, keys.
  await ok(api, 'GET', '/account', 200);
  await ok(api, 'GET', '/sandbox/clock', 200);
  await ok(pkClient, 'GET', '/payment_methods', 200);
  const permissions = ['payment_intents:write', 'refunds:write'];
  await ok(api, 'POST', '/api_keys', 201, { body: { name: 'Order service', permissions } });
  await ok(api, 'GET', '/api_keys', 200);
  const doomed = await ok(api, 'POST', '/api_keys', 201, { body: { name: 'Order service (old)', permissions } });
  await ok(api, 'DELETE', `/api_keys/${doomed.id}`, 200);
  await ok(api, 'POST', '/api_keys', 400, { body: { name: 'No permissions', permissions: [] } });

  // Webhook endpoints first, so that every later event is delivered.
  const filtered = await ok(api, 'POST', '/webhook_endpoints', 201, {
    body: { url: `${receiver.url}/filtered`, events: ['payment.succeeded', 'payment.failed', 'refund.succeeded'], name: 'Shop backend', description: 'Order fulfilment' },
  });
  const all = await ok(api, 'POST', '/webhook_endpoints', 201, { body: { url: `${receiver.url}/all` } });
  await ok(api, 'GET', '/webhook_endpoints', 200);
  await ok(api, 'POST', '/webhook_endpoints', 400, { body: { url: 'ftp://shop.example/hooks' } });
  await ok(api, 'POST', `/webhook_endpoints/${all.id}/test`, 202);

  // Payment intents: express (to SUCCEEDED, watched on its stream), reference (listed, cancelled, paid).
  const referenceBody = { amount: 25_000, currency: 'AOA', payment_method: 'multicaixa_reference', merchant_reference: 'order-1043' };
  const toCancel = await ok(api, 'POST', '/payment_intents', 201, { body: referenceBody, ...idem() });
  const toPay = await ok(api, 'POST', '/payment_intents', 201, { body: referenceBody, ...idem() });
  await ok(api, 'GET', '/payment_intents', 200);
  const createExpress = async () => {
    const created = await ok(api, 'POST', '/payment_intents', 201, {
      body: { amount: 15_000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000000' }, merchant_reference: 'order-1042', metadata: { order_id: '1042' } },
      ...idem(),
    });
    await ok(api, 'POST', '/sandbox/clock/advance', 200, { body: { seconds: 2 } }); // PROCESSING
    return created;
  };
  const express = await stream(base, 'streamPaymentIntentEvents', account.sk, createExpress, 'PROCESSING', async () => {
    await ok(api, 'POST', '/sandbox/clock/advance', 200, { body: { seconds: 3 } }); // SUCCEEDED
  });
  await ok(api, 'GET', `/payment_intents/${express.id}`, 200);
  // Client tokens: minted for the express payment, read with, revoked.
  const clientToken = await ok(api, 'POST', '/client_tokens', 201, { body: { payment_intent: express.id, expires_in: 900 } });
  await ok(anon, 'GET', `/public/payments/${express.id}?client_token=${clientToken.token}`, 200);
  await ok(api, 'DELETE', `/client_tokens/${clientToken.id}`, 200);
  // Trusted GraphQL documents and the settings that say who must run only them.
  const trusted = 'query PaymentStatus($id: ID!) { paymentIntent(id: $id) { id status } }';
  const trustedId = createHash('sha256').update(trusted).digest('hex');
  await ok(api, 'POST', '/graphql/documents', 200, { body: { format: 'apollo-persisted-query-manifest', version: 1, operations: [{ id: trustedId, name: 'PaymentStatus', type: 'query', body: trusted }] } });
  await ok(api, 'POST', '/graphql/documents', 400, { body: { [trustedId]: 'query Other { account { id } }' } });
  await ok(api, 'GET', '/graphql/documents', 200);
  await ok(api, 'GET', '/graphql/settings', 200);
  await ok(api, 'PUT', '/graphql/settings', 200, { body: { trusted_documents: { client_token: 'enforce' } } });
  await ok(api, 'DELETE', `/graphql/documents/sha256:${trustedId}`, 200);
  await ok(api, 'POST', `/payment_intents/${toCancel.id}/cancel`, 200);
  await ok(api, 'POST', '/sandbox/simulate/reference_paid', 200, { body: { reference: toPay.reference.number } });

  // Refunds.
  const refund = await ok(api, 'POST', '/refunds', 201, { body: { payment_intent: express.id, amount: 5000 }, ...idem() });
  await ok(api, 'POST', '/sandbox/clock/advance', 200, { body: { seconds: 3 } });
  await waitFor(() => api.get(`/refunds/${refund.id}`), (r) => r.body.status === 'SUCCEEDED');
  await ok(api, 'GET', `/refunds/${refund.id}`, 200);

  // Payment links, QR codes, the link's public JSON, page and stream.
  const link = await ok(api, 'POST', '/payment_links', 201, { body: { amount: 7500, description: 'Camisola oficial' } });
  await ok(api, 'GET', '/payment_links', 200);
  await ok(api, 'GET', `/payment_links/${link.id}`, 200);
  await ok(api, 'GET', `/payment_links/${link.id}/qr`, 200);
  await ok(api, 'POST', '/qr_codes', 201, { body: { payment_link: link.code } });
  await ok(api, 'POST', '/qr_codes', 400, { body: { payment_link: link.code, amount: 7500 } });
  await ok(anon, 'GET', `/public/payment_links/${link.code}`, 200);
  await ok(anon, 'GET', `/pay/${link.code}`, 200, { root: true });
  await ok(anon, 'POST', `/public/payment_links/${link.code}/payments`, 201, { body: { payment_method: 'multicaixa_express', customer: { mobile: '923000000' } } });
  const createRejected = () =>
    ok(anon, 'POST', `/public/payment_links/${link.code}/payments`, 201, { body: { payment_method: 'multicaixa_express', customer: { mobile: '923000001' } } });
  await stream(base, 'streamPublicPaymentEvents', null, createRejected, 'PENDING', async () => {
    await ok(api, 'POST', '/sandbox/clock/advance', 200, { body: { seconds: 5 } }); // FAILED rejected_by_customer
  });
  await ok(api, 'DELETE', `/payment_links/${link.id}`, 200);
  await ok(anon, 'GET', `/public/payment_links/${link.code}`, 410);
  await ok(anon, 'GET', `/pay/${link.code}`, 410, { root: true });
  await ok(anon, 'GET', '/pay/ZZZZZZZZ', 404, { root: true });

  // Checkout sessions: one left OPEN, one paid (COMPLETED), one with a reference payment.
  const sessionBody = { amount: 32_000, merchant_reference: 'order-2001', success_url: 'https://shop.example/orders/2001/paid', cancel_url: 'https://shop.example/cart' };
  const open = await ok(api, 'POST', '/checkout/sessions', 201, { body: sessionBody });
  await ok(anon, 'GET', `/public/checkout/sessions/${open.id}`, 200);
  await ok(anon, 'GET', `/checkout/${open.id}`, 200, { root: true });
  const paid = await ok(api, 'POST', '/checkout/sessions', 201, { body: sessionBody });
  await ok(anon, 'POST', `/public/checkout/sessions/${paid.id}/payments`, 201, { body: { payment_method: 'multicaixa_express', customer: { mobile: '923000000' } } });
  await ok(api, 'POST', '/sandbox/clock/advance', 200, { body: { seconds: 5 } });
  await waitFor(() => api.get(`/checkout/sessions/${paid.id}`), (r) => r.body.status === 'COMPLETED');
  await ok(api, 'GET', `/checkout/sessions/${paid.id}`, 200);
  await ok(anon, 'GET', `/checkout/${paid.id}`, 410, { root: true });
  await ok(anon, 'GET', '/checkout/cs_000000000000000000000000', 404, { root: true });
  const byReference = await ok(api, 'POST', '/checkout/sessions', 201, { body: sessionBody });
  await ok(anon, 'POST', `/public/checkout/sessions/${byReference.id}/payments`, 201, { body: { payment_method: 'multicaixa_reference' } });

  // Deliveries: the test ping delivered to `all`; the payment.succeeded of `filtered` sent again.
  const delivered = (d: any[], type: string) => d.find((x) => x.event_type === type && x.state === 'DELIVERED');
  await waitFor(() => api.get(`/webhook_endpoints/${all.id}/deliveries`), (r) => Boolean(delivered(r.body.data, 'test.ping')));
  await ok(api, 'GET', `/webhook_endpoints/${all.id}/deliveries`, 200);
  // The API payment's payment.succeeded (page payments have no api_key_id).
  const ofExpress = (d: any[]) => d.find((x) => x.event_type === 'payment.succeeded' && x.state === 'DELIVERED' && JSON.parse(x.request_body).data.id === express.id);
  const filteredDeliveries = await waitFor(
    () => api.get(`/webhook_endpoints/${filtered.id}/deliveries`),
    (r) => Boolean(ofExpress(r.body.data)) && ['payment.failed', 'refund.succeeded'].every((t) => delivered(r.body.data, t)),
  );
  const succeeded = ofExpress(filteredDeliveries.body.data);
  await ok(api, 'POST', `/webhook_endpoints/${filtered.id}/deliveries/${succeeded.id}/retry`, 200);
  await ok(api, 'POST', `/webhook_endpoints/${filtered.id}/rotate_secret`, 200);
  await ok(api, 'PUT', `/webhook_endpoints/${filtered.id}/chaos`, 200, { body: { duplicate: 0.2, reorder: 0.1, bad_signature: 0.1, delay_ms: { min: 0, max: 2000 }, seed: 42 } });
  await ok(api, 'GET', `/webhook_endpoints/${filtered.id}/chaos`, 200);
  await ok(api, 'DELETE', `/webhook_endpoints/${filtered.id}/chaos`, 200);
  await ok(api, 'POST', `/webhook_endpoints/${filtered.id}/recover`, 202, { body: { since: '2026-11-21T09:00:00.000Z' } });
  // One recover per endpoint, then a cooldown: the next one is refused, saying when.
  await ok(api, 'POST', `/webhook_endpoints/${filtered.id}/recover`, 409, { body: { since: '2026-11-21T09:00:00.000Z' } });
  // A pull endpoint: its test ping waits until acknowledged.
  const pull = await ok(api, 'POST', '/webhook_endpoints', 201, { body: { mode: 'pull' } });
  const pinged = await ok(api, 'POST', `/webhook_endpoints/${pull.id}/test`, 202);
  await waitFor(() => api.get(`/webhook_endpoints/${pull.id}/pending`), (r) => r.body.data.length === 1);
  await ok(api, 'GET', `/webhook_endpoints/${pull.id}/pending`, 200);
  await ok(api, 'POST', `/webhook_endpoints/${pull.id}/pending/ack`, 200, { body: { ids: [pinged.event_id] } });

  // Events and logs (a refused express payment first, so that the log holds an error code).
  await ok(api, 'POST', '/payment_intents', 400, { body: { amount: 15_000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '12' } }, ...idem() });
  await ok(api, 'GET', '/events?limit=100', 200);
  // Request logs are written in batches, after the answer.
  await waitFor(() => api.get('/logs?limit=100'), (r) => r.body.data.some((l: any) => l.error_code === 'invalid_phone_number'));
  await ok(api, 'GET', '/logs?limit=100', 200);

  // Errors of the reusable responses.
  await ok(api, 'POST', '/payment_links', 400, { body: { amount: 7500, colour: 'blue' } });
  await ok(api, 'GET', '/account', 401, { key: null });
  await ok(pkClient, 'GET', '/account', 403);
  await ok(api, 'GET', '/payment_intents/pay_000000000000000000000000', 404);
  await ok(api, 'POST', `/payment_intents/${express.id}/cancel`, 409);
  await ok(api, 'POST', '/refunds', 404, { body: { payment_intent: 'pay_000000000000000000000000' }, ...idem() });
  await ok(api, 'POST', '/refunds', 409, { body: { payment_intent: toCancel.id }, ...idem() });
  await ok(api, 'POST', '/payment_links', 413, { rawBody: JSON.stringify({ amount: 7500, description: 'x'.repeat(70_000) }), headers: { 'content-type': 'application/json' } });

  // Every webhook body received, for the webhook's examples.
  for (const r of receiver.received) record('webhook paymentEvent', { media: 'application/json', body: JSON.parse(r.rawBody), where: `POST ${r.path}` });

  await ok(api, 'DELETE', `/webhook_endpoints/${all.id}`, 200);
  // Last: it deletes what the calls above made.
  await ok(api, 'POST', '/sandbox/reset', 200);
}

/** 503 maintenance and, past the per-IP limit of the answers no key counts, 429. */
async function driveMaintenanceGateway(server: TestServer): Promise<void> {
  const anon = new ApiClient(server.baseUrl);
  await ok(anon, 'GET', '/account', 503);
  await ok(anon, 'GET', '/account', 503);
  await ok(anon, 'GET', '/account', 429);
  // Started with METRICS_TOKEN: without it, 401 (maintenance is /v1's only); past its limit, 429.
  await ok(anon, 'GET', '/metrics', 401, { root: true });
  await untilLimited(anon, '/metrics');
  // The pages count per address too, and answer their limit with a page.
  await untilLimited(anon, '/pay/ZZZZZZZZ');
  await untilLimited(anon, '/checkout/cs_000000000000000000000000');
}

/** GETs a root route until it answers 429 (the gateway's limit is 2 a minute here): at most 3 calls. */
async function untilLimited(client: ApiClient, p: string): Promise<void> {
  let res = await call(client, 'GET', p, { root: true });
  for (let i = 0; i < 2 && res.status !== 429; i++) res = await call(client, 'GET', p, { root: true });
  expect(res.status, `GET ${p}: ${res.text.slice(0, 300)}`).toBe(429);
}

/**
 * A fault the gateway does not expect, then a gateway whose database is gone. The fault: the account's
 * creation time is not a date, so its serialization throws: a 500
 * `internal_error`. The database gone: readiness 503, and a /v1 request 503 `service_unavailable`.
 */
async function driveGatewayWithoutDatabase(engine: EngineProcess, gateway: GatewayProcess): Promise<void> {
  const anon = new ApiClient(gateway.url);
  const account: TestAccount = await createAccount(gateway.url);
  const client = await MongoClient.connect(engine.uri);
  try {
    await client.db().collection('accounts').updateOne({ _id: account.id as never }, { $set: { created_at: 'not a date' } });
  } finally {
    await client.close();
  }
  await ok(account.api, 'GET', '/account', 500);
  await engine.kill();
  await waitFor(() => anon.get('/readyz', { root: true }), (r) => r.status === 503, 20_000, 200);
  await ok(anon, 'GET', '/readyz', 503, { root: true });
  await ok(account.api, 'GET', '/account', 503);
  // A page that cannot read its link answers with a page too.
  await ok(anon, 'GET', '/pay/ZZZZZZZZ', 500, { root: true });
  await ok(anon, 'GET', '/checkout/cs_000000000000000000000000', 500, { root: true });
}

// ----- the comparison ----------------------------------------------------------------------------------

function textRoot(media: string, text: string): string {
  if (media === 'text/html') return /^\s*<!doctype html>/i.test(text) ? 'an HTML document' : `not an HTML document: ${text.slice(0, 40)}`;
  const root = /^\s*(?:<\?xml[^>]*>\s*)?<([A-Za-z][\w:-]*)/.exec(text)?.[1];
  return root ? `<${root}>` : `no root element: ${text.slice(0, 40)}`;
}

function sseMessagesOf(text: string): SseMessage[] {
  return text
    .split(/\n\n+/)
    .map((block) => {
      const m: SseMessage = { data: '' };
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) m.event = line.slice(6).trim();
        else if (line.startsWith('id:')) m.id = line.slice(3).trim();
        else if (line.startsWith('data:')) m.data += line.slice(5).trim();
      }
      return m;
    })
    .filter((m) => m.data !== '');
}

/** Differences between an example and one real answer ([] = same shape). */
function compare(site: ExampleSite, answer: Answer): string[] {
  if (answer.media !== site.media) return [`${site.media} in the contract, ${answer.media} in the answer`];
  switch (site.media) {
    case 'application/json':
      return shapes.differences(site.example, answer.body, site.schema);
    case 'application/yaml':
      return shapes.differences(parseYaml(String(site.example)), parseYaml(String(answer.body)), {});
    case 'text/html':
    case 'image/svg+xml': {
      const a = textRoot(site.media, String(site.example));
      const b = textRoot(site.media, String(answer.body));
      return a === b ? [] : [`${a} in the example, ${b} in the answer`];
    }
    case 'text/plain': {
      // The Prometheus text: every metric the example declares (`# TYPE name type`) is in the answer, so typed.
      const types = (text: string) => new Set(String(text).split('\n').filter((l) => l.startsWith('# TYPE ')));
      const real = types(String(answer.body));
      return [...types(String(site.example))].filter((t) => !real.has(t)).map((t) => `${t} in the example, not in the answer`);
    }
    case 'text/event-stream': {
      const schema = { $ref: `#/components/schemas/${SSE_DATA[site.operationId ?? '']}` };
      const real = answer.body as SseMessage[];
      const out: string[] = [];
      for (const [i, m] of sseMessagesOf(String(site.example)).entries()) {
        const sameEvent = real.filter((r) => r.event === m.event);
        if (sameEvent.length === 0) {
          out.push(`message ${i} (event ${m.event}): no such event in the stream (${real.map((r) => r.event).join(', ')})`);
          continue;
        }
        const diffs = sameEvent.map((r) => shapes.differences(JSON.parse(m.data), JSON.parse(r.data), schema, `message ${i} (${m.event}) data`));
        if (!diffs.some((d) => d.length === 0)) out.push(...diffs.sort((a, b) => a.length - b.length)[0]!);
      }
      return out;
    }
    default:
      return [`no comparison for ${site.media}`];
  }
}

describe('openapi.yaml examples have the shape of real answers', () => {
  let server: TestServer | undefined;
  let receiver: Receiver | undefined;
  let engine: EngineProcess | undefined;
  let gateway: GatewayProcess | undefined;

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startGatewayWithJobs({ RATE_LIMIT_PER_MINUTE: '100000' });
    await driveMainGateway(server, receiver);
    await server.stop();
    server = undefined;
    // One gateway per process at a time (mongoose's connection is the module's).
    server = await startTestServer({ MAINTENANCE_MODE: 'true', PUBLIC_RATE_LIMIT_PER_MINUTE: '2', METRICS_TOKEN: 'examples-test-metrics-token' });
    await driveMaintenanceGateway(server);
    await server.stop();
    server = undefined;
    if (outside) {
      // GET /metrics 403: a gateway without METRICS_TOKEN, reached through a non-loopback address.
      server = await startTestServer({ HOST: '0.0.0.0' });
      await ok(new ApiClient(viaAddress(server.baseUrl, outside)), 'GET', '/metrics', 403, { root: true });
      await server.stop();
      server = undefined;
    }
    engine = await spawnEngine();
    gateway = await spawnGateway(engine.uri);
    await driveGatewayWithoutDatabase(engine, gateway);
  });

  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
    await gateway?.kill();
    await engine?.kill();
  });

  it('finds the examples', () => {
    expect(sites.length).toBeGreaterThan(40);
    // Every operation with a response example is among the sites (directly or through a reusable response).
    const covered = new Set(sites.flatMap((s) => s.answerKeys.map((k) => k.split(' ')[0])));
    for (const [, item] of Object.entries<Schema>(doc.paths)) {
      for (const method of METHODS) if (item[method]) expect(covered, item[method].operationId).toContain(item[method].operationId);
    }
  });

  it.each(sites.map((s) => [s.label, s] as const))('%s', (_label, site) => {
    const candidates = site.answerKeys.flatMap((k) => answers.get(k) ?? []);
    expect(candidates.length, `no real answer for ${site.answerKeys.join(', ')} was produced by this test`).toBeGreaterThan(0);
    const results = candidates.map((a) => ({ a, d: compare(site, a) }));
    if (results.some((r) => r.d.length === 0)) return;
    const closest = results.sort((x, y) => x.d.length - y.d.length)[0]!;
    expect.fail(`the example differs from every real answer (${candidates.length}); the closest, ${closest.a.where}:\n${closest.d.join('\n')}`);
  });
});
