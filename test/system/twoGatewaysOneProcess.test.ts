// Two gateways started in one process (startGateway twice) on one database share nothing but the
// database: each runs its own hooks once per event it stores, its own timer handlers through its own
// poller, and closing one leaves the other's timers, hooks, webhooks and streams working (issues 44, 59).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmbeddedMongo, type EmbeddedMongo } from '@pgw/embedded-mongo';
import { scheduleTimer } from '../../src/platform/timers/timerService';
import { TimerModel } from '../../src/platform/timers/timerModel';
import type { GatewayRuntime } from '../../src/domain/gatewayRuntime';
import { createAccount, type TestAccount } from '../support/accounts';
import { ApiClient } from '../support/client';
import { createPayment, expressBody, getPayment, referenceBody } from '../support/payments';
import { startReceiver, type Receiver } from '../support/receiver';
import { startTestServer, type TestServer } from '../support/server';
import { createEndpoint, deliveries } from '../support/webhooks';
import { waitFor } from '../support/wait';
import { openSse, type SseClient } from '../streams/support/sseClient';
import { follow, sseClient, statusOf, UPDATES, within, type Followed } from '../graphql/httpSubscriptionSupport';

vi.setConfig({ testTimeout: 60_000 });

/** What one gateway's own hook and timer handler saw: event ids (with how often) and timer ids. */
interface Seen {
  events: Map<string, number>;
  timers: string[];
}

const COUNT_KIND = 'test.two_gateways';

function counting(seen: Seen) {
  return (runtime: GatewayRuntime) => {
    runtime.hooks.onEventStored((event) => {
      seen.events.set(event.id, (seen.events.get(event.id) ?? 0) + 1);
    }, { name: 'test.count' });
    runtime.timers.register(COUNT_KIND, async (timer) => {
      seen.timers.push(timer.id);
    });
  };
}

let engine: EmbeddedMongo;
let a: TestServer;
let b: TestServer;
let receiver: Receiver;
let acct: TestAccount;
let endpointId: string;
const seenA: Seen = { events: new Map(), timers: [] };
const seenB: Seen = { events: new Map(), timers: [] };

beforeAll(async () => {
  engine = await startEmbeddedMongo({ port: 0 });
  a = await startTestServer({ MONGODB_URI: engine.uri }, { register: counting(seenA) });
  b = await startTestServer({ MONGODB_URI: engine.uri }, { register: counting(seenB) });
  receiver = await startReceiver();
  acct = await createAccount(a.baseUrl);
  endpointId = (await createEndpoint(acct.api, `${receiver.url}/hook`, { events: ['*'] })).id;
}, 60_000);
afterAll(async () => {
  await b?.stop();
  await a?.stop();
  await receiver?.close();
  await engine?.close();
});

/** Each event of the payment delivered to the receiver, and how many requests carried it. */
async function deliveredOnce(api: ApiClient, paymentId: string): Promise<string[]> {
  const succeeded = await receiver.waitFor((r) => JSON.parse(r.rawBody).type === 'payment.succeeded' && JSON.parse(r.rawBody).data.id === paymentId);
  expect(succeeded).toHaveLength(1);
  const ids = receiver.received.filter((r) => JSON.parse(r.rawBody).data.id === paymentId).map((r) => String(r.headers['service-event-id']));
  // Exactly one request per event: one delivery each, not one per gateway.
  expect(new Set(ids).size).toBe(ids.length);
  const recorded = (await deliveries(api, endpointId)).filter((d) => ids.includes(d.event_id));
  expect(recorded).toHaveLength(ids.length);
  return ids;
}

describe('two gateways in one process', () => {
  it('run only their own hooks, once per event: the gateway that stored it', async () => {
    const payment = await createPayment(acct.api, expressBody());
    await waitFor(() => getPayment(acct.api, payment.id), (p) => p.status === 'SUCCEEDED', 30_000);
    const ids = await deliveredOnce(acct.api, payment.id);
    expect(ids.length).toBeGreaterThanOrEqual(2);
    await a.gateway.runtime.hooks.hooksIdle();
    await b.gateway.runtime.hooks.hooksIdle();
    // Each event's hooks ran once, in one gateway: the request stored payment.created on A, so A ran its
    // hooks; the rail steps ran on whichever poller claimed their timers, and that gateway's hooks ran.
    // (With the registries process-wide, each gateway's hook ran for every event: twice in all.)
    for (const id of ids) expect((seenA.events.get(id) ?? 0) + (seenB.events.get(id) ?? 0), id).toBe(1);
    const created = receiver.received.find((r) => JSON.parse(r.rawBody).type === 'payment.created' && JSON.parse(r.rawBody).data.id === payment.id)!;
    expect(seenA.events.get(String(created.headers['service-event-id']))).toBe(1);
  });

  it('fire a timer once, in the handler of the gateway whose poller claimed it', async () => {
    const { id } = await scheduleTimer({ accountId: null, kind: COUNT_KIND, refId: 'once', dueAt: new Date() });
    await waitFor(() => TimerModel.findById(id).lean(), (t) => t?.state === 'done', 30_000);
    expect([...seenA.timers, ...seenB.timers].filter((t) => t === id)).toHaveLength(1);
  });

  it('leave the other gateway working when one closes: its streams, timers, hooks and webhooks', async () => {
    // On each gateway, a REST event stream and a GraphQL subscription over HTTP (graphql-sse) of one
    // pending payment, each at its snapshot.
    const pending = await createPayment(acct.api, referenceBody());
    const streamsOn = async (server: TestServer): Promise<{ sse: SseClient; graphql: Followed }> => {
      const sse = await openSse(`${server.baseUrl}/v1/payment_intents/${pending.id}/events`, { authorization: `Bearer ${acct.sk}` });
      const client = sseClient(server.baseUrl, acct.sk);
      const graphql = follow((sink) => client.subscribe({ query: UPDATES, variables: { id: pending.id } }, sink));
      await sse.waitFor((m) => m.some((x) => x.event === 'snapshot'));
      await graphql.until((m) => m.data?.paymentIntentUpdated.snapshot === true);
      return { sse, graphql };
    };
    const onA = await streamsOn(a);
    const onB = await streamsOn(b);
    const held = (server: TestServer) => [server.gateway.realtime.sse.count(), server.gateway.graphql.httpSubscriptions.count(), server.gateway.realtime.connections.openCounts().sse];
    // Each gateway counts its own: one event stream, one HTTP subscription, two stream places.
    expect([held(a), held(b)]).toEqual([[1, 1, 2], [1, 1, 2]]);

    await a.stop();
    // A's close ended A's streams (with their reconnect hints)...
    await within('the end of A\'s event stream', onA.sse.ended);
    expect(onA.sse.comments.at(-1)).toBe('server restarting; reconnect with Last-Event-ID');
    expect(await within('the end of A\'s subscription', onA.graphql.ended)).toHaveProperty('error');
    // ...and left B's open, still counted against B's caps, still delivering.
    expect(onB.sse.isEnded()).toBe(false);
    expect(held(b)).toEqual([1, 1, 2]);
    const apiB = new ApiClient(b.baseUrl, acct.sk);
    expect((await apiB.post(`/payment_intents/${pending.id}/cancel`)).status).toBe(200);
    await onB.sse.waitFor((m) => m.some((x) => x.event === 'payment.cancelled'));
    await onB.graphql.until((m) => statusOf(m) === 'CANCELLED');
    onB.sse.close();
    onB.graphql.stop();
    await waitFor(async () => held(b), (n) => n.every((x) => x === 0));

    expect((await fetch(`${b.baseUrl}/readyz`)).status).toBe(200);
    const payment = await createPayment(apiB, expressBody());
    // The rail's +2 s / +5 s timers run on B's poller, A's having stopped.
    await waitFor(() => getPayment(apiB, payment.id), (p) => p.status === 'SUCCEEDED', 30_000);
    const ids = await deliveredOnce(apiB, payment.id);
    await b.gateway.runtime.hooks.hooksIdle();
    for (const id of ids) expect(seenB.events.get(id), id).toBe(1);
    for (const id of ids) expect(seenA.events.has(id), id).toBe(false);

    const { id } = await scheduleTimer({ accountId: null, kind: COUNT_KIND, refId: 'after-close', dueAt: new Date() });
    await waitFor(() => TimerModel.findById(id).lean(), (t) => t?.state === 'done', 30_000);
    expect(seenB.timers.filter((t) => t === id)).toHaveLength(1);
    expect(seenA.timers).not.toContain(id);
  });
});
