import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedMongo, type EmbeddedMongo } from '@pgw/embedded-mongo';
import { verifyWebhookSignature } from '@pgw/client';
import { accountEndpoints } from '../../src/domain/webhooks/endpointCache';
import { createAccount, type TestAccount } from '../support/accounts';
import { ApiClient } from '../support/client';
import { createPayment, referenceBody } from '../support/payments';
import { spawnGateway, type GatewayProcess } from '../support/processes';
import { startReceiver, type Receiver } from '../support/receiver';
import { createEndpoint } from './support/webhooks';

/**
 * A gateway process remembers each account's webhook endpoints and reads them again only when the
 * account's `endpoints_version` moved (src/domain/webhooks/endpointCache.ts). Here one gateway (`b`)
 * delivers every event, and each endpoint change is made by another gateway process that is then
 * stopped, so that nothing but `b`'s reading of the version can make `b` see it.
 */
let engine: EmbeddedMongo | undefined;
let uri: string;
let b: GatewayProcess;
let receiver: Receiver;
const env = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };

beforeAll(async () => {
  engine = process.env.MONGODB_URI ? undefined : await startEmbeddedMongo({ port: 0 });
  uri = process.env.MONGODB_URI ?? engine!.uri;
  await mongoose.connect(uri);
  receiver = await startReceiver();
  b = await spawnGateway(uri, env);
}, 120_000);
afterAll(async () => {
  await b?.stop();
  await receiver?.close();
  await mongoose.disconnect();
  await engine?.close();
});

/** Runs `change` against a gateway process of its own, stopped afterwards. */
async function inOtherProcess<T>(change: (url: string) => Promise<T>): Promise<T> {
  const other = await spawnGateway(uri, env);
  try {
    return await change(other.url);
  } finally {
    await other.stop();
  }
}

/** Creates a payment through `b` and resolves once its event's hooks (deliveries included) have run there. */
async function paymentEventHandled(account: TestAccount): Promise<string> {
  const payment = await createPayment(new ApiClient(b.url, account.sk), referenceBody());
  const events = mongoose.connection.collection('events');
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
    const event = await events.findOne({ payment_id: payment.id, hooks_done: true });
    if (event) return String(event._id);
  }
  throw new Error(`the event of ${payment.id} was not handled within 20 s`);
}

const deliveriesOf = (eventId: string) => mongoose.connection.collection('webhook_deliveries').countDocuments({ event_id: eventId });

describe('endpoints remembered by a process', () => {
  it('an endpoint created, rotated or deleted in another process is used by the next event', async () => {
    const account = await createAccount(b.url);
    // b reads the account's endpoints (none) for this event and remembers them.
    expect(await deliveriesOf(await paymentEventHandled(account))).toBe(0);

    const endpoint = await inOtherProcess((url) => createEndpoint(new ApiClient(url, account.sk), `${receiver.url}/cached`));
    const created = await paymentEventHandled(account);
    const [first] = await receiver.waitFor((r) => r.headers['service-event-id'] === created);
    expect(() => verifyWebhookSignature(first!.rawBody, String(first!.headers['service-signature']), endpoint.secret)).not.toThrow();

    const rotated = await inOtherProcess(async (url) => {
      const res = await new ApiClient(url, account.sk).post(`/webhook_endpoints/${endpoint.id}/rotate_secret`, {});
      expect(res.status, res.text).toBe(200);
      return res.body;
    });
    const afterRotation = await paymentEventHandled(account);
    const [signed] = await receiver.waitFor((r) => r.headers['service-event-id'] === afterRotation);
    // Signed with the new secret too: b did not sign with the secrets it had remembered.
    expect(() => verifyWebhookSignature(signed!.rawBody, String(signed!.headers['service-signature']), rotated.secret)).not.toThrow();

    await inOtherProcess(async (url) => {
      const res = await new ApiClient(url, account.sk).delete(`/webhook_endpoints/${endpoint.id}`);
      expect(res.status, res.text).toBe(200);
    });
    expect(await deliveriesOf(await paymentEventHandled(account))).toBe(0);
    expect(((await mongoose.connection.collection('accounts').findOne({ _id: account.id as never })) as { endpoints_version?: number } | null)?.endpoints_version).toBe(3);
  }, 120_000);

  it('are read again when the version moved, and after a few seconds even when it did not (a process died before its bump)', async () => {
    const account = await createAccount(b.url);
    const t0 = Date.now();
    expect(await accountEndpoints(account.id, 0, t0)).toEqual([]);
    // Written without the bump that follows every change made through the gateway.
    await mongoose.connection.collection('webhook_endpoints').insertOne({
      _id: 'whe_unbumped0000000000000000' as never,
      account_id: account.id,
      url: `${receiver.url}/unbumped`,
      events: ['*'],
      secrets: [],
      created_at: new Date(),
    });
    expect(await accountEndpoints(account.id, 0, t0 + 1_000)).toEqual([]);
    expect((await accountEndpoints(account.id, 1, t0 + 1_000)).map((e) => e._id)).toEqual(['whe_unbumped0000000000000000']);
    await mongoose.connection.collection('webhook_endpoints').deleteOne({ _id: 'whe_unbumped0000000000000000' as never });
    expect((await accountEndpoints(account.id, 1, t0 + 2_000)).length).toBe(1);
    expect(await accountEndpoints(account.id, 1, t0 + 8_000)).toEqual([]);
  });
});
