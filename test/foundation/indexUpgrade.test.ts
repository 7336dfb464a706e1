/**
 * A database written by an older version of the gateway: an index whose options have changed since
 * (here `payment_intents.pending_events.queued_at_1`, which became sparse) must not stop the gateway
 * from starting; the collection's indexes are rebuilt to the schema's.
 */
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmbeddedMongo } from '@pgw/embedded-mongo';
import { startTestServer, type TestServer } from '../support/server';

let engine: Awaited<ReturnType<typeof startEmbeddedMongo>>;
let server: TestServer | undefined;

beforeAll(async () => {
  engine = await startEmbeddedMongo({ port: 0 });
  const client = await MongoClient.connect(engine.uri);
  const old = client.db().collection('payment_intents');
  await old.insertOne({ _id: 'pay_old' as never, pending_events: [] });
  await old.createIndex({ 'pending_events.queued_at': 1 }); // not sparse, as before
  // Indexes an older schema declared and this one no longer does.
  await client.db().collection('timers').createIndex({ state: 1, fire_at: 1 });
  await client.db().collection('events').createIndex({ hooks_done: 1, stored_at: 1 });
  await client.close();
});
afterAll(async () => {
  await server?.stop();
  await engine.close();
});

it('starts over a database whose index options changed, and rebuilds those indexes', async () => {
  server = await startTestServer({ MONGODB_URI: engine.uri });
  const res = await fetch(`${server.baseUrl}/readyz`);
  expect(res.status).toBe(200);
  const client = await MongoClient.connect(engine.uri);
  const indexes = await client.db().collection('payment_intents').indexes();
  await client.close();
  const rebuilt = indexes.find((i) => i.name === 'pending_events.queued_at_1');
  expect(rebuilt?.sparse).toBe(true);
  expect(indexes.some((i) => i.name === 'reference.number_1' && i.unique && i.sparse)).toBe(true);
});

it('drops the indexes an older schema declared and builds the new ones', async () => {
  const client = await MongoClient.connect(engine.uri);
  const timers = (await client.db().collection('timers').indexes()).map((i) => i.name);
  const events = await client.db().collection('events').indexes();
  await client.close();
  expect(timers).not.toContain('state_1_fire_at_1');
  expect(timers).toContain('scheduled_by_fire_at');
  expect(events.map((i) => i.name)).not.toContain('hooks_done_1_stored_at_1');
  expect(events.find((i) => i.name === 'stored_at_1')?.partialFilterExpression).toEqual({ hooks_done: false });
});
