/**
 * The plan test's seeding and workload: a store that holds enough that a bad plan shows (one account
 * with a few thousand payments of every kind beside a small one), then every route of REST, GraphQL
 * and the SSE stream, so that the gateway sends every shape of query it has.
 */
import { createAccount, idempotencyKey, type TestAccount } from '../support/accounts';
import type { ApiClient } from '../support/client';
import { waitFor } from '../support/wait';
import { startReceiver, type Receiver } from '../support/receiver';

const express = (mobile: string, amount: number) => ({ amount, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile } });
const reference = (amount: number) => ({ amount, currency: 'AOA', payment_method: 'multicaixa_reference' });

async function must(p: Promise<{ status: number; body: any; text: string }>, ...ok: number[]): Promise<any> {
  const res = await p;
  if (!ok.includes(res.status)) throw new Error(`unexpected ${res.status}: ${res.text.slice(0, 300)}`);
  return res.body;
}

/** Runs `n` jobs with `width` in flight. */
async function pool(n: number, width: number, job: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < n) await job(next++);
  }));
}

function create(api: ApiClient, body: unknown): Promise<any> {
  return must(api.post('/payment_intents', body, { idempotencyKey: idempotencyKey() }), 201);
}

export interface Seeded {
  big: TestAccount;
  small: TestAccount;
  receiver: Receiver;
  paid: any[];
  pending: any[];
}

/** `payments` in the big account: three in four reference, the rest express (succeeding and failing). */
export async function seed(baseUrl: string, payments: number): Promise<Seeded> {
  const receiver = await startReceiver();
  const big = await createAccount(baseUrl, 'plans big');
  const small = await createAccount(baseUrl, 'plans small');
  for (const a of [big, small]) await must(a.api.post('/webhook_endpoints', { url: `${receiver.url}/hook` }), 201);
  const pending: any[] = [];
  await pool(payments, 16, async (i) => {
    const body = i % 4 === 3 ? express(i % 8 === 3 ? '923000001' : '923000000', 1000 + i) : reference(1000 + i);
    const p = await create(big.api, body);
    if (p.payment_method === 'multicaixa_reference') pending.push(p);
  });
  for (let i = 0; i < 20; i++) await create(small.api, i % 2 ? reference(2000 + i) : express('923000000', 2000 + i));
  // Pay some references, so that there are succeeded payments to refund.
  const paid = pending.splice(0, 20);
  for (const p of paid) await must(big.api.post('/sandbox/simulate/reference_paid', { reference: p.reference.number }), 200);
  return { big, small, receiver, paid, pending };
}

async function graphql(baseUrl: string, key: string, query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const res = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { errors?: unknown[] };
  if (body.errors) throw new Error(`GraphQL errors: ${JSON.stringify(body.errors).slice(0, 300)}`);
  return body;
}

/** Reads the SSE stream of a payment until its first event (the snapshot), then closes it. */
async function sseSnapshot(url: string, headers: Record<string, string> = {}): Promise<void> {
  const ctl = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: ctl.signal });
  if (res.status !== 200) throw new Error(`SSE ${url}: ${res.status}`);
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes('\n\n')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  ctl.abort();
}

/** Every route, for both accounts. */
export async function workload(baseUrl: string, s: Seeded): Promise<void> {
  for (const acct of [s.big, s.small]) {
    const api = acct.api;
    const list = await must(api.get('/payment_intents?limit=25'), 200);
    const one = list.data[0];
    await must(api.get(`/payment_intents/${one.id}`), 200);
    await must(api.get('/payment_intents?limit=10&status=PENDING'), 200);
    if (list.has_more) await must(api.get(`/payment_intents?limit=10&starting_after=${list.data.at(-1).id}`), 200);
    await must(api.get('/events?limit=25'), 200);
    await must(api.get('/events?limit=25&type=payment.succeeded'), 200);
    const events = await must(api.get('/events?limit=25'), 200);
    if (events.has_more) await must(api.get(`/events?limit=25&starting_after=${events.data.at(-1).id}`), 200);
    await must(api.get(`/events?limit=25&object_id=${one.id}`), 200);
    await must(api.get(`/events?limit=25&object_id=${one.id}&type=payment.created`), 200);
    await must(api.get('/logs?limit=25'), 200);
    await must(api.get('/account'), 200);
    await must(api.get('/api_keys'), 200);
    await must(api.get('/payment_methods'), 200);
    await must(api.get('/sandbox/clock'), 200);
    const endpoints = await must(api.get('/webhook_endpoints'), 200);
    const ep = endpoints.data[0];
    await must(api.get(`/webhook_endpoints/${ep.id}/deliveries`), 200);
    await must(api.post(`/webhook_endpoints/${ep.id}/test`, {}), 200, 201, 202);
    await graphql(baseUrl, acct.sk, `query($id: ID!) { paymentIntent(id: $id) { id status events { id type } refunds { id } } }`, { id: one.id });
    await graphql(baseUrl, acct.sk, `{ paymentIntents(first: 25) { edges { node { id events { id type } } } } events(first: 20) { edges { node { id } } } logs(first: 20) { requestId } webhookEndpoints { id } paymentLinks { id } apiKeys { id } sandboxClock { now } account { id } }`);
    // The dashboard's endpoint page: its success rate, its deliveries a page at a time (filtered, and after a
    // cursor), each with its attempts and headers.
    const lab = `query($id: ID!, $after: String) { webhookEndpoint(id: $id) { recentSuccess { rate }
      all: deliveriesConnection(first: 2) { nodes { id attemptLog { at } requestHeaders { name } } pageInfo { endCursor } }
      next: deliveriesConnection(first: 2, after: $after) { nodes { id } }
      inState: deliveriesConnection(first: 2, state: DELIVERED, after: $after) { nodes { id } }
      ofType: deliveriesConnection(first: 2, eventType: TEST_PING) { nodes { id } }
      some: deliveriesConnection(first: 2, state: DELIVERED, eventType: TEST_PING) { nodes { id } } } }`;
    const firstPage = await graphql(baseUrl, acct.sk, lab, { id: ep.id });
    const cursor = firstPage?.data?.webhookEndpoint?.all?.pageInfo?.endCursor;
    if (cursor) await graphql(baseUrl, acct.sk, lab, { id: ep.id, after: cursor });
    await sseSnapshot(`${baseUrl}/v1/payment_intents/${one.id}/events`, { authorization: `Bearer ${acct.sk}` });
    // The dashboard's overview and its search by each key (a reference number, a mobile, an id, a merchant
    // reference), whole and by prefix.
    const search = `query($a: String, $b: String, $c: String, $d: String, $e: String) { overview { from } week: overview(range: LAST_7_DAYS) { from }
      a: paymentIntents(filter: { search: $a }) { nodes { id } } b: paymentIntents(filter: { search: $b }) { nodes { id } }
      c: paymentIntents(filter: { search: $c, status: [PENDING] }) { nodes { id } }
      d: paymentIntents(filter: { search: $d }) { nodes { id } } e: paymentIntents(filter: { search: $e }) { nodes { id } } }`;
    await graphql(baseUrl, acct.sk, search, { a: one.reference?.number ?? one.id, b: '+244923000001', c: 'order-1', d: one.id.slice(0, 8), e: (one.reference?.number ?? '').slice(0, 6) || 'order' });
  }
  const api = s.big.api;
  // Refunds of paid references, partial then the rest.
  const paid = s.paid[0];
  const r1 = await must(api.post('/refunds', { payment_intent: paid.id, amount: 100 }, { idempotencyKey: idempotencyKey() }), 201);
  await must(api.get(`/refunds/${r1.id}`), 200);
  await must(api.post('/refunds', { payment_intent: s.paid[1].id }, { idempotencyKey: idempotencyKey() }), 201);
  // Cancel a pending reference; links and checkout sessions with page payments.
  await must(api.post(`/payment_intents/${s.pending[0].id}/cancel`, {}), 200);
  const link = await must(api.post('/payment_links', { amount: 5000 }), 201);
  await must(api.get(`/payment_links/${link.id}`), 200);
  await must(api.get('/payment_links'), 200);
  await must(api.get(`/payment_links/${link.id}/qr`), 200);
  await must(api.get(`/public/payment_links/${link.code}`), 200);
  await must(api.post(`/public/payment_links/${link.code}/payments`, { payment_method: 'multicaixa_express', customer: { mobile: '923000000' } }), 201);
  const session = await must(api.post('/checkout/sessions', { amount: 3000 }), 201);
  await must(api.get(`/checkout/sessions/${session.id}`), 200);
  await must(api.get(`/public/checkout/sessions/${session.id}`), 200);
  // The dashboard's lists REST has no form of: checkout sessions (all, by status, the next page), the
  // log's filters, and the keys with their last use.
  const lists = `query($after: String) { all: checkoutSessions(first: 5) { nodes { id } } open: checkoutSessions(status: OPEN) { nodes { id } }
    next: checkoutSessions(first: 1, after: $after) { nodes { id } }
    m: logs(first: 50, filter: { method: "POST" }) { requestId } s: logs(first: 50, filter: { statusClass: CLIENT_ERROR_4XX }) { requestId }
    p: logs(first: 50, filter: { pathPrefix: "/v1/refunds" }) { requestId } d: logs(first: 50, filter: { source: DASHBOARD }) { requestId }
    apiKeys { id lastUsedAt } }`;
  await graphql(baseUrl, s.big.sk, lists, { after: session.id });
  const pagePay = await must(api.post(`/public/checkout/sessions/${session.id}/payments`, { payment_method: 'multicaixa_reference' }), 201);
  await sseSnapshot(`${baseUrl}/v1/public/payments/${pagePay.id ?? pagePay.payment_intent?.id}/events`).catch(() => undefined);
  await must(api.post('/qr_codes', { amount: 1000 }), 201, 200);
  const key = await must(api.post('/api_keys', { name: 'plans', permissions: ['payment_intents:read'] }), 201);
  await must(api.delete(`/api_keys/${key.id}`), 200);
  // The clock: a span of the account's timers fired in due order, then the others shifted.
  await must(api.post('/sandbox/clock/advance', { seconds: 10 }), 200);
}

const FINAL = ['SUCCEEDED', 'FAILED', 'CANCELLED', 'EXPIRED'];

/**
 * Waits for the background work the workload set off: the small account's express payments carried to
 * their end by the rail in real time (the big account's payments and refunds were by its clock advance),
 * and their payment.succeeded events delivered to the receiver.
 */
export async function backgroundWorkDone(s: Seeded): Promise<void> {
  const express = async () =>
    ((await must(s.small.api.get('/payment_intents?limit=100'), 200)).data as any[]).filter((p) => p.payment_method === 'multicaixa_express');
  const settled = await waitFor(express, (ps) => ps.every((p) => FINAL.includes(p.status)), 60_000);
  const succeeded = new Set(settled.filter((p) => p.status === 'SUCCEEDED').map((p) => p.id));
  const delivered = () => {
    const got = new Set(s.receiver.received.map((r) => JSON.parse(r.rawBody)).filter((e) => e.type === 'payment.succeeded').map((e) => e.data.id));
    return Promise.resolve([...succeeded].filter((id) => !got.has(id)));
  };
  await waitFor(delivered, (missing) => missing.length === 0, 60_000);
}
