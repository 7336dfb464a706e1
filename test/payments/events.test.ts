import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emitAccountEvent, type StoredEvent } from '../../src/domain/events';
import { EventModel } from '../../src/domain/events/eventModel';
import { buildTimers } from '../../src/domain/events/outbox';
import { PaymentModel } from '../../src/domain/payments/paymentModel';
import { railStepTimer } from '../../src/domain/payments/rail';
import { TimerModel } from '../../src/platform/timers/timerModel';
import { advance, createAccount, createPayment, expectError, expressBody, idempotencyKey, referenceBody, startPaymentsServer, waitFor } from './support/payments';
import type { TestServer } from '../support/server';
import { gqlData } from '../graphql/support';

let server: TestServer;
beforeAll(async () => {
  server = await startPaymentsServer();
});
afterAll(async () => server?.stop());

describe('onEventStored hooks', () => {
  it('see each event after it is stored, once, in order', async () => {
    const { api, id: accountId } = await createAccount(server.baseUrl);
    const seen: Array<{ type: string; storedFirst: boolean; seq: number }> = [];
    const off = server.gateway.runtime.hooks.onEventStored(async (e: StoredEvent) => {
      if (e.accountId !== accountId) return;
      seen.push({ type: e.type, storedFirst: Boolean(await EventModel.exists({ _id: e.id })), seq: e.seq });
    });
    try {
      const pi = await createPayment(api, referenceBody());
      await api.post('/sandbox/simulate/reference_paid', { reference: pi.reference.number });
      await waitFor(async () => seen.length, (n) => n >= 3, 10_000, 50);
      expect(seen.map((s) => s.type)).toEqual(['payment.created', 'reference.paid', 'payment.succeeded']);
      expect(seen.every((s) => s.storedFirst)).toBe(true);
      expect(seen.map((s) => s.seq)).toEqual([...seen.map((s) => s.seq)].sort((a, b) => a - b));
      await waitFor(() => EventModel.countDocuments({ account_id: accountId, hooks_done: false }), (n) => n === 0, 10_000, 50);
      expect(seen).toHaveLength(3);
    } finally {
      off();
    }
  });

  it('retry a hook that throws until it succeeds', async () => {
    const { api, id: accountId } = await createAccount(server.baseUrl);
    let calls = 0;
    const off = server.gateway.runtime.hooks.onEventStored((e) => {
      if (e.accountId !== accountId) return;
      calls++;
      if (calls === 1) throw new Error('receiver down');
    });
    try {
      await createPayment(api, referenceBody());
      await waitFor(async () => calls, (n) => n >= 2, 25_000, 100);
      const doc = await waitFor(() => EventModel.findOne({ account_id: accountId }).lean(), (d) => d?.hooks_done === true, 10_000, 100);
      expect(doc!.hook_attempts).toBe(2);
      expect(calls).toBe(2);
    } finally {
      off();
    }
  });
});

describe('GET /events and emitAccountEvent', () => {
  it('lists newest first with the contract fields; account events take their place in the order', async () => {
    const { api, id: accountId } = await createAccount(server.baseUrl);
    const pi = await createPayment(api, referenceBody());
    const ping = await emitAccountEvent(server.gateway.runtime, accountId, 'test.ping', { message: 'hello' });
    await api.post(`/payment_intents/${pi.id}/cancel`);
    const res = await api.get('/events');
    expect(res.status).toBe(200);
    expect(res.body.data.map((e: any) => e.type)).toEqual(['payment.cancelled', 'test.ping', 'payment.created']);
    const listed = res.body.data[1];
    expect(Object.keys(listed)).toEqual(['id', 'object', 'type', 'sequence', 'livemode', 'created_at', 'data']);
    expect(listed).toEqual({ id: ping.id, object: 'event', type: 'test.ping', sequence: 1, livemode: false, created_at: ping.createdAt.toISOString(), data: { message: 'hello' } });

    const limited = await api.get('/events?limit=1');
    expect(limited.body.data.map((e: any) => e.type)).toEqual(['payment.cancelled']);
    expectError(await api.get('/events?limit=0'), 400, 'invalid_request');
    expectError(await api.get('/events?limit=101'), 400, 'invalid_request');
    const other = await createAccount(server.baseUrl);
    expect((await other.api.get('/events')).body).toEqual({ object: 'list', data: [], has_more: false });
  });

  it('number each object\'s events 1, 2, 3... even when changes race for it', async () => {
    const { api, sk } = await createAccount(server.baseUrl);
    const pi = await createPayment(api, referenceBody());
    // The payment and the cancellation race: whichever wins, the loser changes nothing.
    await Promise.all([
      ...Array.from({ length: 4 }, () => api.post('/sandbox/simulate/reference_paid', { reference: pi.reference.number })),
      ...Array.from({ length: 4 }, () => api.post(`/payment_intents/${pi.id}/cancel`)),
    ]);
    const status = (await api.get(`/payment_intents/${pi.id}`)).body.status;
    if (status === 'SUCCEEDED') {
      await Promise.all([1, 2, 3].map(() => api.post('/refunds', { payment_intent: pi.id, amount: 100 }, { idempotencyKey: idempotencyKey() })));
    }
    const events = (await api.get(`/events?object_id=${pi.id}&limit=100`)).body.data.reverse();
    const own = events.filter((e: any) => e.data.id === pi.id);
    expect(own.map((e: any) => e.sequence)).toEqual(own.map((_: unknown, i: number) => i + 1));
    expect(own.length).toBeGreaterThanOrEqual(2);
    // A refund is its own object: its one event is its first.
    for (const e of events.filter((x: any) => x.type === 'refund.succeeded')) expect(e.sequence).toBe(1);
    // Webhook bodies and GraphQL carry it too (deliveries are built from the same resource).
    const viaGraphql = await gqlData(server.baseUrl, sk, 'query($id: ID!) { events(objectId: $id, first: 100) { nodes { id sequence } } }', { id: pi.id });
    expect(viaGraphql.events.nodes.map((e: { sequence: number }) => e.sequence).reverse()).toEqual(events.map((e: any) => e.sequence));
  });

  it('pages with starting_after and has_more, and filters by type and object_id', async () => {
    const { api, sk } = await createAccount(server.baseUrl);
    const a = await createPayment(api, referenceBody());
    const b = await createPayment(api, referenceBody());
    await api.post(`/payment_intents/${a.id}/cancel`);
    await api.post(`/payment_intents/${b.id}/cancel`);
    const all = (await api.get('/events?limit=100')).body;
    expect(all.has_more).toBe(false);
    expect(all.data).toHaveLength(4);

    // Pages of three then one: the cursor continues exactly where the page stopped.
    const first = (await api.get('/events?limit=3')).body;
    expect(first.has_more).toBe(true);
    const second = (await api.get(`/events?limit=3&starting_after=${first.data[2].id}`)).body;
    expect(second.has_more).toBe(false);
    expect([...first.data, ...second.data].map((e: any) => e.id)).toEqual(all.data.map((e: any) => e.id));
    // A page that ends exactly at the last event says so.
    expect((await api.get('/events?limit=4')).body.has_more).toBe(false);

    const ofA = (await api.get(`/events?object_id=${a.id}`)).body;
    expect(ofA.data.map((e: any) => [e.type, e.data.id])).toEqual([
      ['payment.cancelled', a.id],
      ['payment.created', a.id],
    ]);
    const cancelled = (await api.get('/events?type=payment.cancelled')).body;
    expect(cancelled.data.map((e: any) => e.data.id)).toEqual([b.id, a.id]);
    const both = (await api.get(`/events?type=payment.created&object_id=${b.id}`)).body;
    expect(both.data.map((e: any) => [e.type, e.data.id])).toEqual([['payment.created', b.id]]);
    // GraphQL's Query.events takes the same filters.
    const viaGraphql = await gqlData(server.baseUrl, sk, 'query($id: ID!) { events(objectId: $id) { nodes { id } } }', { id: a.id });
    expect(viaGraphql.events.nodes.map((e: { id: string }) => e.id)).toEqual(ofA.data.map((e: any) => e.id));

    expectError(await api.get('/events?starting_after=evt_nope'), 400, 'invalid_request');
    expectError(await api.get('/events?type=payment.nope'), 400, 'invalid_request');
    // Another account's event is no cursor here, and another account's object lists nothing.
    const other = await createAccount(server.baseUrl);
    expectError(await other.api.get(`/events?starting_after=${first.data[0].id}`), 400, 'invalid_request');
    expect((await other.api.get(`/events?object_id=${a.id}`)).body.data).toEqual([]);
  });
});

describe('outbox timers', () => {
  it('a timer left in an intent\'s outbox by a crash is scheduled by the sweeper and fires', async () => {
    const { api, id: accountId } = await createAccount(server.baseUrl);
    const pi = await createPayment(api, expressBody('923000000'));
    // As if the process died right after the insert that carried the first rail timer, before
    // dispatching it: the timer is not scheduled, it is still in the intent's outbox.
    const [timer] = buildTimers([railStepTimer({ _id: pi.id, account_id: accountId, created_at: new Date(pi.created_at), customer: pi.customer }, 0, 0)!]);
    const removed = await TimerModel.deleteOne({ _id: timer!._id, state: 'scheduled' });
    expect(removed.deletedCount).toBe(1);
    await PaymentModel.collection.updateOne({ _id: pi.id as never }, { $push: { pending_timers: { ...timer!, queued_at: Date.now() - 10_000 } } as never });
    // Once the sweeper has scheduled it, the account's sandbox clock moves past the rail's outcome (+5 s)
    // rather than waiting for it in real time: the timer fires, and the rail's next step after it.
    await waitFor(() => TimerModel.exists({ _id: timer!._id }), (found) => found !== null, 20_000, 200);
    await advance(api, 10);
    const done = await waitFor(async () => (await api.get(`/payment_intents/${pi.id}`)).body, (p: any) => p.status === 'SUCCEEDED', 20_000, 200);
    expect(done.status).toBe('SUCCEEDED');
    const doc = await PaymentModel.findById(pi.id).lean();
    expect(doc!.pending_timers).toEqual([]);
    const types = (await api.get('/events')).body.data.map((e: any) => e.type);
    expect(types).toEqual(['payment.succeeded', 'payment.created']);
  });

  it('a pending timer keeps the clock its due time was computed on, under its name and the older one', async () => {
    // Queued a minute ago on a wall clock 60 s behind today's (a step since): its fire time moves by the step.
    const { api, id: accountId } = await createAccount(server.baseUrl);
    const pi = await createPayment(api, referenceBody());
    const dueAt = new Date(Date.now() + 3_600_000);
    const pushed: string[] = [];
    for (const field of ['due_base', 'clock_base'] as const) {
      const [timer] = buildTimers([{ accountId, kind: 'test.never', refId: pi.id, dueAt, dedupeKey: `base-${field}` }]);
      const { due_base: base, ...rest } = timer!;
      await PaymentModel.collection.updateOne({ _id: pi.id as never }, { $push: { pending_timers: { ...rest, [field]: base! - 60_000, queued_at: Date.now() - 60_000 } } as never });
      pushed.push(timer!._id);
    }
    const stored = await waitFor(() => TimerModel.find({ _id: { $in: pushed } }).lean(), (ts) => ts.length === 2, 20_000, 200);
    for (const t of stored) expect(Math.abs(t.fire_at - dueAt.getTime() - 60_000)).toBeLessThan(1_000);
  });
});
