// A graceful stop hands back the leases its gateway still holds (src/domain/leaseHandover.ts): an event
// whose hooks it claimed and a first attempt it leased go to another gateway on the same database at its
// next sweep, not when the lease lapses. Leases another gateway holds, and chaos holds, stay as they are.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmbeddedMongo, type EmbeddedMongo } from '@pgw/embedded-mongo';
import { EventModel } from '../../src/domain/events/eventModel';
import { WebhookDeliveryModel } from '../../src/domain/webhooks/webhookDeliveryModel';
import { createAccount, type TestAccount } from '../support/accounts';
import { createPayment, expressBody } from '../support/payments';
import { startReceiver, type Receiver } from '../support/receiver';
import { startTestServer, type TestServer } from '../support/server';
import { createEndpoint } from '../support/webhooks';

vi.setConfig({ testTimeout: 60_000 });

/** Far beyond any wait of this test: a lease that ends before it was handed back. */
const LONG_LEASE_MS = 10 * 60_000;

let engine: EmbeddedMongo;
let a: TestServer;
let b: TestServer;
let receiver: Receiver;
let acct: TestAccount;

beforeAll(async () => {
  engine = await startEmbeddedMongo({ port: 0 });
  a = await startTestServer({ MONGODB_URI: engine.uri });
  b = await startTestServer({ MONGODB_URI: engine.uri });
  receiver = await startReceiver();
  acct = await createAccount(a.baseUrl);
  await createEndpoint(acct.api, `${receiver.url}/hook`, { events: ['*'] });
}, 60_000);
afterAll(async () => {
  await b?.stop();
  await a?.stop();
  await receiver?.close();
  await engine?.close();
});

const sentFor = (eventId: string) => receiver.received.filter((r) => r.headers['service-event-id'] === eventId);

describe('a graceful stop hands back its leases', () => {
  it('releases only its own: the other gateway sends that work long before the leases would lapse', async () => {
    // Real records to copy: a payment's first event and its delivery, as gateway A made them.
    const payment = await createPayment(acct.api, expressBody());
    const [created] = await receiver.waitFor((r) => JSON.parse(r.rawBody).type === 'payment.created' && JSON.parse(r.rawBody).data.id === payment.id);
    const eventId = String(created!.headers['service-event-id']);
    const event = (await EventModel.findById(eventId).lean())!;
    const delivery = (await WebhookDeliveryModel.findOne({ event_id: eventId }).lean())!;
    expect(event && delivery).toBeTruthy();

    const until = Date.now() + LONG_LEASE_MS;
    const ownerA = { hooks: a.gateway.runtime.hooks.leaseOwner, deliveries: a.gateway.runtime.deliveries.leaseOwner };
    // Events whose hooks A claimed (as at their insert) and another process claimed; old enough to sweep.
    const eventCopy = (id: string, owner: string, seq: number) => ({
      ...event,
      _id: id,
      seq,
      hooks_done: false,
      hooks_lease_until: until,
      hooks_lease_owner: owner,
      stored_at: Date.now() - 60_000,
    });
    // First attempts leased by A, by another process, and by A but held by chaos.
    const deliveryCopy = (id: string, owner: string, extra: Record<string, unknown> = {}) => ({
      ...delivery,
      _id: `whd_handover_${id}`,
      event_id: `evt_handover_${id}`,
      state: 'PENDING',
      step: 0,
      attempts: 0,
      lease_until: until,
      lease_owner: owner,
      ...extra,
    });
    await EventModel.collection.insertMany([
      eventCopy('evt_handover_hooks_a', ownerA.hooks, event.seq + 1_000_000),
      eventCopy('evt_handover_hooks_other', 'another-process', event.seq + 1_000_001),
    ] as never[]);
    await WebhookDeliveryModel.collection.insertMany([
      deliveryCopy('a', ownerA.deliveries),
      deliveryCopy('other', 'another-process'),
      deliveryCopy('held', ownerA.deliveries, { held: true }),
    ] as never[]);

    await a.stop();

    // A's stop released its own leases, and nothing else.
    const events = new Map((await EventModel.find({ _id: { $in: ['evt_handover_hooks_a', 'evt_handover_hooks_other'] } }).lean()).map((e) => [e._id, e]));
    expect(events.get('evt_handover_hooks_other')).toMatchObject({ hooks_lease_until: until, hooks_lease_owner: 'another-process' });
    const deliveries = new Map((await WebhookDeliveryModel.find({ _id: { $in: ['whd_handover_a', 'whd_handover_other', 'whd_handover_held'] } }).lean()).map((d) => [d._id, d]));
    expect(deliveries.get('whd_handover_other')).toMatchObject({ state: 'PENDING', lease_until: until, lease_owner: 'another-process' });
    expect(deliveries.get('whd_handover_held')).toMatchObject({ state: 'PENDING', lease_until: until, lease_owner: ownerA.deliveries });
    // B's sweepers may have taken A's already (a lease of B's own then); A's own lease is gone either way.
    expect(events.get('evt_handover_hooks_a')!.hooks_lease_owner).not.toBe(ownerA.hooks);
    expect(deliveries.get('whd_handover_a')!.lease_owner).not.toBe(ownerA.deliveries);

    // B takes what A handed back at its next sweeps, with A's leases ten minutes from lapsing: the hooks
    // of the event (its delivery is created and sent), and the first attempt A had leased.
    await receiver.waitFor((r) => r.headers['service-event-id'] === 'evt_handover_hooks_a', 1, 30_000);
    await receiver.waitFor((r) => r.headers['service-event-id'] === 'evt_handover_a', 1, 30_000);
    expect(Date.now()).toBeLessThan(until);
    // What other owners hold stays theirs until it lapses: nothing was sent for it.
    await b.gateway.runtime.hooks.hooksIdle();
    expect(sentFor('evt_handover_hooks_other')).toEqual([]);
    expect(sentFor('evt_handover_other')).toEqual([]);
    expect(sentFor('evt_handover_held')).toEqual([]);
  });
});
