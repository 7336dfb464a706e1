import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmbeddedMongo, type EmbeddedMongo } from '@pgw/embedded-mongo';
import { createAccount, idempotencyKey } from '../support/accounts';
import { spawnGateway, type GatewayProcess } from '../support/processes';
import { type TestServer } from '../support/server';
import { busSubscribersAre, collect, gqlData, startGraphqlTestServer, wsClient } from './support';

/**
 * Two gateway processes over one database: this one (A) and a child process (B, `tsx src/main.ts`).
 * A subscription on one process receives the changes of a payment created and driven by the other.
 */
let engine: EmbeddedMongo;
let a: TestServer;
let child: GatewayProcess | undefined;
let bUrl: string;

beforeAll(async () => {
  engine = await startEmbeddedMongo({ port: 0 });
  a = await startGraphqlTestServer({ MONGODB_URI: engine.uri });
  child = await spawnGateway(engine.uri);
  bUrl = child.url;
}, 120_000);

afterAll(async () => {
  await child?.stop();
  await a?.stop();
  await engine?.close();
}, 60_000);

const UPDATES = `subscription($id: ID!) {
  paymentIntentUpdated(id: $id) { snapshot eventType paymentIntent { id status } }
}`;
const statusOf = (m: { data?: any }) => m.data?.paymentIntentUpdated.paymentIntent.status as string | undefined;

it('a subscription on the second gateway receives PENDING, PROCESSING and SUCCEEDED of a payment created on the first', async () => {
  const acct = await createAccount(a.baseUrl);
  const created = await gqlData(
    a.baseUrl,
    acct.sk,
    `mutation($key: String!) { createPaymentIntent(idempotencyKey: $key, input: { amount: 15000, currency: "AOA", paymentMethod: MULTICAIXA_EXPRESS, customer: { mobile: "923000000" } }) { id } }`,
    { key: idempotencyKey() },
  );
  const client = wsClient(bUrl, acct.sk);
  try {
    const messages = await collect(client, UPDATES, { id: created.createPaymentIntent.id }, (ms) => ms.some((m) => statusOf(m) === 'SUCCEEDED'), 45_000);
    expect(messages.map(statusOf)).toEqual(['PENDING', 'PROCESSING', 'SUCCEEDED']);
    expect(messages.at(-1)!.data.paymentIntentUpdated.eventType).toBe('PAYMENT_SUCCEEDED');
  } finally {
    await client.dispose();
  }
});

it('and the other way round: a payment created on the second gateway, watched on the first; account events too', async () => {
  const acct = await createAccount(bUrl);
  const client = wsClient(a.baseUrl, acct.sk);
  try {
    // A's bus is where this subscription registers (the first test subscribed on B): once it counts
    // one, A's subscription sees every event stored from now on, by either process.
    await busSubscribersAre(0);
    const events = collect(client, 'subscription { events(types: [PAYMENT_SUCCEEDED]) { type paymentIntent { id } } }', {}, (ms) => ms.length >= 1, 45_000);
    await busSubscribersAre(1);
    const created = await gqlData(
      bUrl,
      acct.sk,
      `mutation($key: String!) { createPaymentIntent(idempotencyKey: $key, input: { amount: 2000, currency: "AOA", paymentMethod: MULTICAIXA_EXPRESS, customer: { mobile: "923000000" } }) { id } }`,
      { key: idempotencyKey() },
    );
    const id = created.createPaymentIntent.id as string;
    const messages = await collect(client, UPDATES, { id }, (ms) => ms.some((m) => statusOf(m) === 'SUCCEEDED'), 45_000);
    const statuses = messages.map(statusOf);
    expect(statuses.at(-1)).toBe('SUCCEEDED');
    expect(statuses).toEqual([...new Set(statuses)]);
    const succeeded = (await events).map((m) => (m.data as any).events);
    expect(succeeded).toEqual([{ type: 'PAYMENT_SUCCEEDED', paymentIntent: { id } }]);
  } finally {
    await client.dispose();
  }
});
