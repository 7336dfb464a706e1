import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedMongo, type EmbeddedMongo } from '@pgw/embedded-mongo';
import { verifyWebhookSignature } from '@pgw/client';
import { createAccount } from '../support/accounts';
import { ApiClient } from '../support/client';
import { spawnGateway, type GatewayProcess } from '../support/processes';
import { startReceiver, type Receiver } from '../support/receiver';
import { createEndpoint, createPayment, deliveries, referenceBody, waitFor } from './support/webhooks';

/**
 * A gateway process killed with SIGKILL between an event and its delivery: after a restart (another
 * process on the same database) the receiver gets the event.
 */
let engine: EmbeddedMongo;
let receiver: Receiver;
const gateways: GatewayProcess[] = [];
/** The gateway up now, if any: each test kills the one it starts with, and the next test starts with its restart. */
let live: GatewayProcess | undefined;

beforeAll(async () => {
  engine = await startEmbeddedMongo({ port: 0 });
  receiver = await startReceiver();
});
afterAll(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  await receiver?.close();
  await engine?.close();
});

async function gateway(): Promise<GatewayProcess> {
  const g = await spawnGateway(engine.uri, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  gateways.push(g);
  live = g;
  return g;
}

/** The gateway up now, or a new one: one process fewer to start than a fresh one per test. */
const runningGateway = async (): Promise<GatewayProcess> => live ?? gateway();

async function kill(g: GatewayProcess): Promise<void> {
  await g.kill();
  if (live === g) live = undefined;
}

/** Runs `use` on a connection of its own to the gateways' database, as another process would. */
async function withDatabase<T>(use: (conn: mongoose.Connection) => Promise<T>): Promise<T> {
  const conn = await mongoose.createConnection(engine.uri).asPromise();
  try {
    return await use(conn);
  } finally {
    await conn.close();
  }
}

describe('crash between an event and its delivery', () => {
  it('an attempt cut short by SIGKILL is made again after the restart', async () => {
    const a = await runningGateway();
    const acct = await createAccount(a.url);
    const endpoint = await createEndpoint(acct.api, `${receiver.url}/hooks/killed`);
    // The first request hangs: the gateway dies with the attempt in flight, before recording anything.
    receiver.reply = () => ({ status: 200, hang: true });
    const pi = await createPayment(acct.api, referenceBody(21_000));
    const [first] = await receiver.waitFor((r) => r.path === '/hooks/killed');
    const eventId = String(first!.headers['service-event-id']);
    await kill(a);

    // The dead process's lease on the attempt (15 s of real time, PENDING_LEASE_MS) is what keeps
    // another process off it until then; its lapse is not what this test proves, so it is lapsed in
    // the store rather than waited for. It must still be the attempt cut short: PENDING, none recorded.
    const lapsed = await withDatabase((conn) =>
      conn.collection('webhook_deliveries').updateOne(
        { event_id: eventId, endpoint_id: endpoint.id, state: 'PENDING', attempts: 0 },
        { $min: { lease_until: Date.now() } },
      ),
    );
    expect(lapsed.matchedCount).toBe(1);

    receiver.reply = () => ({ status: 200 });
    const b = await gateway();
    const again = await receiver.waitFor((r) => r.headers['service-event-id'] === eventId && r.path === '/hooks/killed', 2, 60_000);
    const event = verifyWebhookSignature(again[1]!.rawBody, String(again[1]!.headers['service-signature']), endpoint.secret);
    expect(event).toMatchObject({ id: eventId, type: 'payment.created', data: { id: pi.id } });
    expect(again[1]!.rawBody).toBe(first!.rawBody);

    const apiB = new ApiClient(b.url, acct.sk);
    const [d] = await waitFor(() => deliveries(apiB, endpoint.id), (l) => l[0]?.state === 'DELIVERED', 20_000);
    expect(d).toMatchObject({ event_id: eventId, state: 'DELIVERED', last_status: 200 });
  }, 120_000);

  it('an event stored by a process that died before its hooks ran is delivered after the restart', async () => {
    const a = await runningGateway();
    const acct = await createAccount(a.url);
    const endpoint = await createEndpoint(acct.api, `${receiver.url}/hooks/orphan`);
    const pi = await createPayment(acct.api, referenceBody(22_000));
    await receiver.waitFor((r) => r.path === '/hooks/orphan');
    await kill(a);

    // What a process leaves behind when it dies right after storing an event: the event, hooks not run.
    const eventId = 'evt_CrashBeforeHooks00000000';
    await withDatabase(async (conn) => {
      const template = await conn.collection('events').findOne({ account_id: acct.id, type: 'payment.created' });
      expect(template).not.toBeNull();
      const seq = Number(template!.seq) + 1_000_000;
      await conn.collection('events').insertOne({
        ...template!,
        _id: eventId as any,
        type: 'payment.cancelled',
        data: { ...template!.data, status: 'CANCELLED' },
        seq,
        hooks_done: false,
        hooks_lease_until: 0,
        stored_at: Date.now() - 60_000,
      });
    });

    const b = await gateway();
    const [got] = await receiver.waitFor((r) => r.headers['service-event-id'] === eventId, 1, 60_000);
    const event = verifyWebhookSignature(got!.rawBody, String(got!.headers['service-signature']), endpoint.secret);
    expect(event).toMatchObject({ id: eventId, type: 'payment.cancelled', data: { id: pi.id } });
    const apiB = new ApiClient(b.url, acct.sk);
    const list = await waitFor(() => deliveries(apiB, endpoint.id), (l) => l.some((d) => d.event_id === eventId && d.state === 'DELIVERED'), 20_000);
    expect(list.filter((d) => d.event_id === eventId)).toHaveLength(1);
  }, 120_000);
});
