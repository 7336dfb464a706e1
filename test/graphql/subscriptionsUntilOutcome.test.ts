import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedMongo, type EmbeddedMongo } from '@pgw/embedded-mongo';
import { PaymentModel } from '../../src/domain/payments/paymentModel';
import { mutatePayment } from '../../src/domain/payments/paymentMutate';
import type { PaymentStatus } from '../../src/domain/payments/paymentStates';
import type { GraphQLContext } from '../../src/graphql/context';
import type { PaymentIntentUpdateModel } from '../../src/graphql/models';
import { paymentIntentUpdates } from '../../src/graphql/subscriptions/paymentIntentUpdates';
import { newId } from '../../src/ids';
import { startEventBus, stopEventBus } from '../../src/realtime/eventBus';
import { createGatewayRuntime } from '../../src/domain/gatewayRuntime';
import { webhookTargetPolicy } from '../../src/domain/webhooks/targetResolver';

/**
 * `paymentIntentUpdates(…, { untilOutcome: true })` completes once the intent feed knows the outcome:
 * final per the state table, and the event that follows in the same transition delivered (so a
 * reference payment ends after payment.succeeded, not after reference.paid). In-process, over the
 * embedded engine and the real event bus.
 */
let engine: EmbeddedMongo;
/** No gateway here: the one runtime of this file stands for it (its events feed the bus at once). */
const runtime = createGatewayRuntime({ webhookTargets: webhookTargetPolicy({ webhookAllowPrivateNetworks: true }) });

beforeAll(async () => {
  engine = await startEmbeddedMongo({ port: 0 });
  await mongoose.connect(engine.uri);
  await Promise.all(Object.values(mongoose.models).map((m) => m.init()));
  await startEventBus({ hooks: runtime.hooks });
});
afterAll(async () => {
  await stopEventBus();
  await mongoose.disconnect();
  await engine?.close();
});

async function insertPayment(accountId: string, method: 'multicaixa_express' | 'multicaixa_reference'): Promise<string> {
  const id = newId('pay');
  const now = new Date();
  await PaymentModel.create({
    _id: id, account_id: accountId, seq: 1, amount: 5000, currency: 'AOA', payment_method: method, status: 'PENDING',
    customer: method === 'multicaixa_express' ? { mobile: '923000000' } : null, created_at: now, updated_at: now,
  });
  return id;
}

const ctxOf = (accountId: string) => ({ actor: { accountId } }) as unknown as GraphQLContext;

/** Every update until the iteration completes. */
async function drain(updates: AsyncIterableIterator<PaymentIntentUpdateModel>): Promise<PaymentIntentUpdateModel[]> {
  const out: PaymentIntentUpdateModel[] = [];
  for await (const u of updates) out.push(u);
  return out;
}

const step = (id: string, status: PaymentStatus, events: string[]) =>
  mutatePayment(runtime, id, () => ({ set: { status }, events: events.map((type) => ({ type })) }), { now: new Date(Date.now() + 1) });

describe('paymentIntentUpdates until the outcome', () => {
  it('an express payment: PENDING, PROCESSING (no event), SUCCEEDED, then complete', async () => {
    const acct = 'acct_outcome_express';
    const id = await insertPayment(acct, 'multicaixa_express');
    const all = drain(await paymentIntentUpdates(ctxOf(acct), id, { untilOutcome: true }));
    await step(id, 'PROCESSING', []);
    await step(id, 'SUCCEEDED', ['payment.succeeded']);
    const updates = await all;
    expect(updates.map((u) => [u.snapshot, u.eventType, u.paymentIntent.status])).toEqual([
      [true, null, 'PENDING'],
      [false, null, 'PROCESSING'],
      [false, 'payment.succeeded', 'SUCCEEDED'],
    ]);
  });

  it('a reference payment completes after payment.succeeded, the follow-up of reference.paid', async () => {
    const acct = 'acct_outcome_reference';
    const id = await insertPayment(acct, 'multicaixa_reference');
    const all = drain(await paymentIntentUpdates(ctxOf(acct), id, { untilOutcome: true }));
    await step(id, 'SUCCEEDED', ['reference.paid', 'payment.succeeded']);
    const updates = await all;
    expect(updates.map((u) => u.eventType)).toEqual([null, 'reference.paid', 'payment.succeeded']);
  });

  it('an intent already final completes after its snapshot', async () => {
    const acct = 'acct_outcome_final';
    const id = await insertPayment(acct, 'multicaixa_express');
    await step(id, 'CANCELLED', ['payment.cancelled']);
    const updates = await drain(await paymentIntentUpdates(ctxOf(acct), id, { untilOutcome: true }));
    expect(updates.map((u) => [u.snapshot, u.paymentIntent.status])).toEqual([[true, 'CANCELLED']]);
  });
});
