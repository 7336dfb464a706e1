import mongoose from 'mongoose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAccount, idempotencyKey, referenceBody, startPaymentsServer } from './support/payments';
import type { TestServer } from '../support/server';

/**
 * A payment's `seq` (its place in the account's list) is the number of its `payment.created` event, one
 * counter reservation per creation instead of two. Data written before that drew it from a counter of its
 * own (`sequences` `payment_intents`), which may be ahead of the events' counter: new payments must still
 * list after the old ones.
 */
let server: TestServer;
// The gateway runs in this process: its own connection reads and writes the stored documents.
const conn = () => mongoose.connection;
const sequences = () => conn().collection<{ _id: string; value: number }>('sequences');
const payments = () => conn().collection<{ _id: string; seq: number }>('payment_intents');

beforeAll(async () => {
  server = await startPaymentsServer();
});
afterAll(async () => server?.stop());

it("takes the payment's seq from its payment.created event, after every seq the old payment counter gave", async () => {
  const acct = await createAccount(server.baseUrl);
  // An older gateway's data: its payment counter is ahead of the events' counter, and its last payment
  // (of this account) holds that counter's value. Set before this gateway creates any payment.
  const OLD = 5_000_000;
  await sequences().updateOne({ _id: 'payment_intents' }, { $set: { value: OLD } }, { upsert: true });
  const first = await acct.api.post('/payment_intents', referenceBody(), { idempotencyKey: idempotencyKey() });
  expect(first.status, first.text).toBe(201);
  await payments().updateOne({ _id: first.body.id }, { $set: { seq: OLD } });

  const created = [];
  for (let i = 0; i < 3; i++) {
    const res = await acct.api.post('/payment_intents', referenceBody(), { idempotencyKey: idempotencyKey() });
    expect(res.status, res.text).toBe(201);
    created.push(res.body.id as string);
  }
  for (const id of created) {
    const stored = await payments().findOne({ _id: id });
    const event = await conn().collection<{ seq: number }>('events').findOne({ payment_id: id, type: 'payment.created' });
    expect(stored!.seq).toBeGreaterThan(OLD);
    expect(stored!.seq).toBe(event!.seq);
  }
  // Newest first: the three new payments, then the one that holds the old counter's value.
  const list = await acct.api.get('/payment_intents');
  expect(list.body.data.map((p: { id: string }) => p.id)).toEqual([...created].reverse().concat(first.body.id));
});
