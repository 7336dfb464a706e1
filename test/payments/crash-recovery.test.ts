import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedMongo, type EmbeddedMongo } from '@pgw/embedded-mongo';
import { createAccount } from '../support/accounts';
import { ApiClient } from '../support/client';
import { createPayment, expressBody, paymentEvents, waitFor } from './support/payments';
import { spawnGateway, type GatewayProcess } from '../support/processes';

/**
 * The gateway is killed with SIGKILL once an express payment's rail timer is recorded and before it
 * fires, then started again on the same database: the durable timers carry the payment to SUCCEEDED,
 * and the outbox makes `payment.succeeded` exist exactly once.
 */
let engine: EmbeddedMongo;
const gateways: GatewayProcess[] = [];

beforeAll(async () => {
  engine = await startEmbeddedMongo({ port: 0 });
});
afterAll(async () => {
  for (const g of gateways) await g.kill().catch(() => undefined);
  await engine?.close();
});

describe('crash recovery', () => {
  it('a payment created just before a SIGKILL still succeeds after a restart, with one payment.succeeded', async () => {
    const first = await spawnGateway(engine.uri);
    gateways.push(first);
    const { api, sk } = await createAccount(first.url);
    const pi = await createPayment(api, expressBody('923000000', 12_000));
    const paidRef = await createPayment(api, { amount: 5_000, currency: 'AOA', payment_method: 'multicaixa_reference' });
    const conn = await mongoose.createConnection(engine.uri).asPromise();
    try {
      // The kill lands with the rail's first step recorded as a durable timer (due at +2 s, PROCESSING)
      // and not yet fired: what carries the payment on is what the database holds.
      await waitFor(() => conn.collection('timers').countDocuments({ ref_id: pi.id }), (n) => n > 0);
      await first.kill();
      // What the dead process left: under load it may already have claimed (leased) the +2 s timer
      // when the kill landed; the new process then runs it again once the lease expires (attempts 2),
      // at-least-once firing whose effect is still once. Only a timer still unclaimed here provably
      // runs once.
      const atKill = await conn.collection('timers').find({ ref_id: pi.id }).toArray();
      const claimedBeforeKill = new Set(
        atKill.filter((t) => !(t.state === 'scheduled' && t.lease_owner == null && t.attempts === 0)).map((t) => String(t._id)),
      );

      const second = await spawnGateway(engine.uri);
      gateways.push(second);
      const client = new ApiClient(second.url, sk);
      const done = await waitFor(
        async () => (await client.get(`/payment_intents/${pi.id}`)).body,
        (p: any) => p.status === 'SUCCEEDED',
        30_000,
        200,
      );
      expect(done.status).toBe('SUCCEEDED');
      expect(done.fee).toBe(180);
      // Every rail timer of the payment ran to completion, and its outbox is empty: no event of this
      // payment is still to come, so the count below is final. A timer unclaimed at the kill (or
      // created after it, by the only live process) ran exactly once; one the dead process had
      // claimed ran at least once.
      const timers = await waitFor(
        () => conn.collection('timers').find({ ref_id: pi.id }).toArray(),
        (ts) => ts.length === 2 && ts.every((t) => t.state !== 'scheduled' && t.state !== 'running'),
      );
      for (const t of timers) {
        expect(t.state).toBe('done');
        if (claimedBeforeKill.has(String(t._id))) expect(t.attempts).toBeGreaterThanOrEqual(1);
        else expect(t.attempts).toBe(1);
      }
      await waitFor(
        () => conn.collection('payment_intents').findOne({ _id: pi.id as any }),
        (p) => (p?.pending_events ?? []).length === 0,
      );

      const events = await paymentEvents(client, pi.id);
      expect(events.map((e) => e.type)).toEqual(['payment.created', 'payment.succeeded']);
      expect(events.filter((e) => e.type === 'payment.succeeded')).toHaveLength(1);

      // The reference payment is still payable on the new process.
      const paid = await client.post('/sandbox/simulate/reference_paid', { reference: paidRef.reference.number });
      expect(paid.status).toBe(200);
      await second.stop();
    } finally {
      await conn.close();
    }
  });

  it('an event left in an outbox by a crash is moved to events by the sweeper', async () => {
    const gw = await spawnGateway(engine.uri);
    gateways.push(gw);
    const { api } = await createAccount(gw.url);
    const pi = await createPayment(api, { amount: 5_000, currency: 'AOA', payment_method: 'multicaixa_reference' });
    // Simulate a crash between the atomic write and the dispatch: push an event into the intent's
    // outbox directly, as the write would have, and let the periodic sweep find it.
    const conn = await mongoose.createConnection(engine.uri).asPromise();
    try {
      const evtId = 'evt_' + 'S'.repeat(24);
      const doc = await conn.collection('payment_intents').findOne({ _id: pi.id as any });
      const data = { ...pi, status: 'CANCELLED' };
      await conn.collection('payment_intents').updateOne(
        { _id: pi.id as any },
        {
          $set: { status: 'CANCELLED' },
          $inc: { version: 1 },
          $push: {
            pending_events: {
              _id: evtId, account_id: doc!.account_id, type: 'payment.cancelled', data_json: JSON.stringify(data), created_at: new Date(),
              seq: 1e12, payment_id: pi.id, queued_at: Date.now() - 10_000,
            },
          } as any,
        },
      );
      const events = await waitFor(() => paymentEvents(api, pi.id), (es) => es.length === 2, 15_000, 200);
      expect(events.map((e) => e.id)).toEqual([expect.any(String), evtId]);
      // The sweeper stores the event, then clears the outbox in a second write: wait for that one too.
      const after = await waitFor(() => conn.collection('payment_intents').findOne({ _id: pi.id as any }), (d) => d?.pending_events?.length === 0, 15_000, 100);
      expect(after!.pending_events).toEqual([]);
    } finally {
      await conn.close();
    }
    await gw.stop();
  });
});
