// Two gateways started in one process (startGateway twice) on one database share nothing but the
// database: each runs its own hooks once per event it stores, its own timer handlers through its own
// poller, and closing one leaves the other's timers, hooks and webhooks working (issue 44).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmbeddedMongo, type EmbeddedMongo } from '@pgw/embedded-mongo';
import { scheduleTimer } from '../../src/platform/timers/timerService';
import { TimerModel } from '../../src/platform/timers/timerModel';
import type { GatewayRuntime } from '../../src/domain/gatewayRuntime';
import { createAccount, type TestAccount } from '../support/accounts';
import { ApiClient } from '../support/client';
import { createPayment, expressBody, getPayment } from '../support/payments';
import { startReceiver, type Receiver } from '../support/receiver';
import { startTestServer, type TestServer } from '../support/server';
import { createEndpoint, deliveries } from '../support/webhooks';
import { waitFor } from '../support/wait';

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

  it('leave the other gateway working when one closes: its timers, hooks and webhooks', async () => {
    await a.stop();
    const apiB = new ApiClient(b.baseUrl, acct.sk);
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
