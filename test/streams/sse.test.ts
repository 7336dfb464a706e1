import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmbeddedMongo, type EmbeddedMongo } from '@pgw/embedded-mongo';
import { ConfigError, loadConfig } from '../../src/config';
import { createAccount } from '../support/accounts';
import { ApiClient } from '../support/client';
import { paymentEvents } from '../support/payments';
import { advance, createPayment, expressBody, referenceBody, waitFor } from '../webhooks/support/webhooks';
import { spawnGateway, type GatewayProcess } from '../support/processes';
import { openSse, type SseMessage } from './support/sseClient';

/**
 * Two gateway processes (the real entry point) on one database. A payment changes on A; SSE clients
 * connected to B see every change, in order, once. The upkeep test starts a third, with a short
 * keep-alive period, and stops it.
 */
// Child processes on a shared 2-core machine: leave room.
vi.setConfig({ testTimeout: 120_000 });

let engine: EmbeddedMongo;
let a: GatewayProcess;
let b: GatewayProcess;

beforeAll(async () => {
  engine = await startEmbeddedMongo({ port: 0 });
  [a, b] = await Promise.all([spawnGateway(engine.uri, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }), spawnGateway(engine.uri, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' })]);
}, 120_000);
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await engine?.close();
});

const auth = (sk: string) => ({ authorization: `Bearer ${sk}` });
const types = (ms: SseMessage[]) => ms.map((m) => m.event);
const PUBLIC_FIELDS = ['id', 'object', 'amount', 'currency', 'payment_method', 'status', 'failure_code', 'reference', 'amount_refunded', 'livemode', 'created_at', 'updated_at'];

async function accountOn(gateway: GatewayProcess, other: GatewayProcess) {
  const acct = await createAccount(gateway.url);
  return { ...acct, apiA: acct.api, apiB: new ApiClient(other.url, acct.sk) };
}

describe('authenticated payment stream', () => {
  it('answers 401 without a key and 404 for an unknown or another account\'s payment', async () => {
    const acct = await accountOn(a, b);
    const pi = await createPayment(acct.apiA, referenceBody());
    const noKey = await openSse(`${b.url}/v1/payment_intents/${pi.id}/events`);
    expect(noKey.status).toBe(401);
    expect(JSON.parse(noKey.text!).error.code).toBe('authentication_failed');

    const stranger = await createAccount(b.url);
    const foreign = await openSse(`${b.url}/v1/payment_intents/${pi.id}/events`, auth(stranger.sk));
    expect(foreign.status).toBe(404);
    expect(JSON.parse(foreign.text!).error.code).toBe('resource_not_found');
    const unknown = await openSse(`${b.url}/v1/payment_intents/pay_000000000000000000000000/events`, auth(acct.sk));
    expect(unknown.status).toBe(404);
  });

  it('a client on B sees the whole life of a payment changed on A, in order, once, then the stream closes', async () => {
    const acct = await accountOn(a, b);
    const pi = await createPayment(acct.apiA, expressBody('923000002'));
    const stream = await openSse(`${b.url}/v1/payment_intents/${pi.id}/events`, auth(acct.sk));
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toBe('text/event-stream');
    expect(stream.headers.get('cache-control')).toBe('no-cache');
    expect(stream.headers.get('x-accel-buffering')).toBe('no');

    const [snapshot] = await stream.waitFor((m) => m.length >= 1);
    expect(snapshot!.event).toBe('snapshot');
    expect(JSON.parse(snapshot!.data)).toMatchObject({ id: pi.id, object: 'payment_intent', status: 'PENDING', customer: { mobile: '923000002' } });
    const created = (await acct.apiA.get('/events')).body.data.find((e: any) => e.type === 'payment.created' && e.data.id === pi.id);
    expect(snapshot!.id).toBe(created.id);

    // UNKNOWN at +10 s, then SUCCEEDED at +30 s via reconciliation (payment.succeeded, payment.reconciled).
    await advance(acct.apiA, 11);
    await stream.waitFor((m) => m.some((x) => x.event === 'payment.unknown'));
    expect(stream.isEnded()).toBe(false);
    await advance(acct.apiA, 25);
    await stream.ended;

    expect(types(stream.messages)).toEqual(['snapshot', 'payment.unknown', 'payment.succeeded', 'payment.reconciled']);
    const ids = stream.messages.map((m) => m.id);
    expect(new Set(ids).size).toBe(ids.length);
    const statuses = stream.messages.map((m) => JSON.parse(m.data).status);
    expect(statuses).toEqual(['PENDING', 'UNKNOWN', 'SUCCEEDED', 'SUCCEEDED']);

    // The ids are the stored events', in the order GET /events lists them (reversed: newest first).
    const stored = (await acct.apiB.get('/events?limit=100')).body.data.filter((e: any) => e.data.id === pi.id).reverse();
    expect(stored.map((e: any) => e.type)).toEqual(['payment.created', 'payment.unknown', 'payment.succeeded', 'payment.reconciled']);
    expect(ids.slice(1)).toEqual(stored.slice(1).map((e: any) => e.id));
    // data is the intent as in the event.
    expect(JSON.parse(stream.messages[2]!.data)).toEqual(stored[2].data);
  });

  it('a client reconnecting with Last-Event-ID misses nothing and gets nothing twice', async () => {
    const acct = await accountOn(a, b);
    const pi = await createPayment(acct.apiA, expressBody('923000002'));
    const first = await openSse(`${b.url}/v1/payment_intents/${pi.id}/events`, auth(acct.sk));
    const [snap] = await first.waitFor((m) => m.length >= 1);
    first.close();

    // Changes happen while the client is away: the reconnect comes once they are stored.
    const storedTypes = async () => (await paymentEvents(acct.apiA, pi.id)).map((e) => e.type as string);
    await advance(acct.apiA, 11);
    await waitFor(storedTypes, (ts) => ts.includes('payment.unknown'));
    const second = await openSse(`${a.url}/v1/payment_intents/${pi.id}/events`, { ...auth(acct.sk), 'last-event-id': snap!.id! });
    await second.waitFor((m) => m.some((x) => x.event === 'payment.unknown'));
    const lastSeen = second.messages.at(-1)!.id!;
    second.close();

    await advance(acct.apiA, 25);
    await waitFor(storedTypes, (ts) => ts.includes('payment.reconciled'));
    const third = await openSse(`${b.url}/v1/payment_intents/${pi.id}/events`, { ...auth(acct.sk), 'last-event-id': lastSeen });
    await third.ended;

    const afterSnapshots = [...second.messages, ...third.messages].filter((m) => m.event !== 'snapshot');
    expect(types(afterSnapshots)).toEqual(['payment.unknown', 'payment.succeeded', 'payment.reconciled']);
    expect(new Set(afterSnapshots.map((m) => m.id)).size).toBe(3);
    expect(second.messages[0]!.event).toBe('snapshot');
    expect(third.messages[0]!.event).toBe('snapshot');
    expect(JSON.parse(third.messages[0]!.data).status).toBe('SUCCEEDED');
  });

  it('connecting to a payment already in a final state yields the snapshot, then the end', async () => {
    const acct = await accountOn(a, b);
    const pi = await createPayment(acct.apiA, referenceBody());
    expect((await acct.apiA.post(`/payment_intents/${pi.id}/cancel`)).status).toBe(200);
    const stream = await openSse(`${b.url}/v1/payment_intents/${pi.id}/events`, auth(acct.sk));
    await stream.ended;
    expect(types(stream.messages)).toEqual(['snapshot']);
    expect(JSON.parse(stream.messages[0]!.data).status).toBe('CANCELLED');
  });
});

describe('public payment stream', () => {
  it('streams the public view of a payment-link payment, without credentials, and refuses others', async () => {
    const acct = await accountOn(a, b);
    const link = await acct.apiA.post('/payment_links', { amount: 12_000, description: 'Stream test' });
    expect(link.status, link.text).toBe(201);
    const paid = await new ApiClient(a.url).post(`/public/payment_links/${link.body.code}/payments`, { payment_method: 'multicaixa_reference' });
    expect(paid.status, paid.text).toBe(201);

    const stream = await openSse(`${b.url}/v1/public/payments/${paid.body.id}/events`);
    expect(stream.status).toBe(200);
    const [snapshot] = await stream.waitFor((m) => m.length >= 1);
    expect(Object.keys(JSON.parse(snapshot!.data)).sort()).toEqual([...PUBLIC_FIELDS].sort());

    const full = (await acct.apiA.get(`/payment_intents/${paid.body.id}`)).body;
    expect((await acct.apiA.post('/sandbox/simulate/reference_paid', { reference: full.reference.number })).status).toBe(200);
    await stream.ended;
    expect(types(stream.messages)).toEqual(['snapshot', 'reference.paid', 'payment.succeeded']);
    for (const m of stream.messages) {
      const view = JSON.parse(m.data);
      expect(Object.keys(view).sort()).toEqual([...PUBLIC_FIELDS].sort());
    }
    expect(JSON.parse(stream.messages[2]!.data).status).toBe('SUCCEEDED');

    // A payment made through the API is not public.
    const direct = await createPayment(acct.apiA, referenceBody());
    const refused = await openSse(`${b.url}/v1/public/payments/${direct.id}/events`);
    expect(refused.status).toBe(404);
    expect((await openSse(`${b.url}/v1/public/payments/pay_000000000000000000000000/events`)).status).toBe(404);
  });
});

describe('stream upkeep', () => {
  it('keeps a stream alive every 15 s unless SSE_KEEPALIVE_MS says otherwise', () => {
    expect(loadConfig({}).connections.sseKeepAliveMs).toBe(15_000);
    expect(loadConfig({ SSE_KEEPALIVE_MS: '300' }).connections.sseKeepAliveMs).toBe(300);
    for (const bad of ['0', '99', '-1', '1.5', 'soon']) expect(() => loadConfig({ SSE_KEEPALIVE_MS: bad })).toThrow(ConfigError);
  });

  it('sends keep-alive comments on an idle stream at the configured period and ends open streams cleanly when the gateway shuts down', async () => {
    // A gateway of its own whose period is short (the default, 15 s, is checked above): the wait's
    // deadline only bounds a hang; how soon they come is not asserted.
    const c = await spawnGateway(engine.uri, { SSE_KEEPALIVE_MS: '300' });
    try {
      const acct = await accountOn(a, c);
      const pi = await createPayment(acct.apiA, referenceBody());
      const stream = await openSse(`${c.url}/v1/payment_intents/${pi.id}/events`, auth(acct.sk));
      await stream.waitFor((m) => m.length >= 1);
      // Again and again while nothing happens to the payment: two comments, no event between them.
      await waitFor(async () => stream.comments.filter((x) => x === 'keep-alive').length, (n) => n >= 2, 60_000, 50);
      expect(types(stream.messages)).toEqual(['snapshot']);
      expect(stream.isEnded()).toBe(false);

      // SIGTERM: the gateway ends its streams itself, before it closes HTTP connections: the stream's last
      // words are its restart comment (a stream cut when the grace period ends gets none). How soon after
      // the signal is measured, not asserted: bench/profile/sseStop.ts.
      c.child.kill('SIGTERM');
      await stream.ended;
      expect(stream.comments.at(-1)).toBe('server restarting; reconnect with Last-Event-ID');
      expect(types(stream.messages)).toEqual(['snapshot']);
    } finally {
      await c.stop();
    }
  });
});
