import mongoose from 'mongoose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedMongo, type EmbeddedMongo } from '@pgw/embedded-mongo';
import { emitAccountEvent } from '../../src/domain/events';
import { statusChangeId, type StatusChange } from '../../src/domain/events/eventHooks';
import { EventModel } from '../../src/domain/events/eventModel';
import { nextSequence } from '../../src/domain/events/sequence';
import { PaymentModel } from '../../src/domain/payments/paymentModel';
import { mutatePayment } from '../../src/domain/payments/paymentMutate';
import { newId } from '../../src/ids';
import { PROCESS_ID } from '../../src/processId';
import { busStats, startEventBus, statusChangesReady, stopEventBus, subscribe, subscribeStatusChanges, type BusEvent } from '../../src/realtime/eventBus';
import { waitFor } from '../support/wait';
import { createGatewayRuntime } from '../../src/domain/gatewayRuntime';
import { webhookTargetPolicy } from '../../src/domain/webhooks/targetResolver';

/** The bus in both of its modes, against a real (embedded) database. */
let engine: EmbeddedMongo;
/** No gateway here: the one runtime of this file stands for it (its events feed the bus at once). */
const runtime = createGatewayRuntime({ webhookTargets: webhookTargetPolicy({ webhookAllowPrivateNetworks: true }) });

beforeAll(async () => {
  engine = await startEmbeddedMongo({ port: 0 });
  await mongoose.connect(engine.uri);
  await Promise.all(Object.values(mongoose.models).map((m) => m.init()));
});
afterAll(async () => {
  await stopEventBus();
  await mongoose.disconnect();
  await engine?.close();
});
afterEach(async () => {
  await stopEventBus();
});

async function until(cond: () => boolean, ms = 5_000): Promise<void> {
  await waitFor(async () => cond(), Boolean, ms, 10);
}

/** Stores an event directly, as a process would (seq chosen by the caller). */
async function storeRaw(accountId: string, type: string, paymentId: string | null, seq: number, origin?: string): Promise<string> {
  const id = newId('evt');
  await EventModel.create({
    _id: id, account_id: accountId, type, data: { id: paymentId ?? 'x', status: 'PENDING' }, created_at: new Date(), seq,
    payment_id: paymentId, livemode: false, hooks_done: true, hooks_lease_until: 0, stored_at: Date.now(), origin,
  });
  return id;
}

/**
 * Resolves once the bus's database path (change stream or poll, both in store order) has carried an
 * event stored now as if by another process: every event stored before it has then had its chance to
 * arrive, so what has not arrived will not (an absence proven by a signal, not by a sleep).
 */
let barriers = 0;
async function busCaughtUp(): Promise<void> {
  const acct = `acct_barrier_${++barriers}`;
  let arrived = false;
  const unsub = subscribe({ accountId: acct }, () => (arrived = true));
  try {
    await storeRaw(acct, 'test.ping', null, await nextSequence('events'), 'host:1:barrier');
    await until(() => arrived);
  } finally {
    unsub();
  }
}

describe.each(['change_stream', 'poll'] as const)('event bus (%s)', (mode) => {
  it('delivers each event once to the matching subscribers only', async () => {
    expect(await startEventBus({ hooks: runtime.hooks, mode, pollMs: 50 })).toBe(mode);
    const acct = `acct_${mode}_1`;
    const pay = 'pay_' + newId('pay').slice(4);
    const forPayment: BusEvent[] = [];
    const forAccount: BusEvent[] = [];
    const onlySucceeded: BusEvent[] = [];
    const otherAccount: BusEvent[] = [];
    const unsubs = [
      subscribe({ accountId: acct, paymentId: pay }, (e) => forPayment.push(e)),
      subscribe({ accountId: acct }, (e) => forAccount.push(e)),
      subscribe({ accountId: acct, types: ['payment.succeeded'] }, (e) => onlySucceeded.push(e)),
      subscribe({ accountId: 'acct_someone_else', paymentId: pay }, (e) => otherAccount.push(e)),
    ];
    const created = await emitAccountEvent(runtime, acct, 'payment.created', { id: pay }, { paymentId: pay });
    const ping = await emitAccountEvent(runtime, acct, 'test.ping', { message: 'hi' });
    const succeeded = await emitAccountEvent(runtime, acct, 'payment.succeeded', { id: pay }, { paymentId: pay });
    await until(() => forAccount.length === 3 && forPayment.length === 2 && onlySucceeded.length === 1);
    await busCaughtUp(); // no second copy of them, and nothing for the other account
    expect(forPayment.map((e) => e.id)).toEqual([created.id, succeeded.id]);
    expect(forAccount.map((e) => e.id)).toEqual([created.id, ping.id, succeeded.id]);
    expect(onlySucceeded.map((e) => e.id)).toEqual([succeeded.id]);
    expect(otherAccount).toEqual([]);
    expect(forPayment[1]).toMatchObject({ accountId: acct, type: 'payment.succeeded', paymentId: pay, data: { id: pay } });

    unsubs[0]!();
    await emitAccountEvent(runtime, acct, 'payment.reconciled', { id: pay }, { paymentId: pay });
    await until(() => forAccount.length === 4);
    await busCaughtUp(); // nothing more for the unsubscribed listener
    expect(forPayment).toHaveLength(2);
    for (const u of unsubs) u();
    expect(busStats().subscribers).toBe(0);
  });

  it("hands this process's own events over directly, and another process's through the database", async () => {
    await startEventBus({ hooks: runtime.hooks, mode, pollMs: 50 });
    const acct = `acct_${mode}_origin`;
    const got: string[] = [];
    const unsub = subscribe({ accountId: acct }, (e) => got.push(e.id));
    // Published at the moment it is stored, before the call returns: no database round trip.
    const own = await emitAccountEvent(runtime, acct, 'test.ping', { message: 'mine' });
    expect(got).toEqual([own.id]);
    expect((await EventModel.findById(own.id).lean())?.origin).toBe(PROCESS_ID);
    // Stored as if by another gateway process: it arrives through the change stream or the poll.
    const foreign = await storeRaw(acct, 'test.ping', null, await nextSequence('events'), 'host:1:other');
    await until(() => got.length === 2);
    // An event signed with this process's id but stored behind the outbox's back is not relayed by
    // the change stream (which leaves this process's events out); the poll sees every event.
    const unannounced = await storeRaw(acct, 'test.ping', null, await nextSequence('events'), PROCESS_ID);
    const third = await storeRaw(acct, 'test.ping', null, await nextSequence('events'));
    await until(() => got.includes(third));
    await busCaughtUp(); // the unannounced event has had its chance (change stream: it never comes)
    expect(got).toEqual(mode === 'change_stream' ? [own.id, foreign, third] : [own.id, foreign, unannounced, third]);
    unsub();
  });

  it('does not lose an event whose lower seq becomes visible after a higher one', async () => {
    await startEventBus({ hooks: runtime.hooks, mode, pollMs: 50 });
    const acct = `acct_${mode}_2`;
    const got: string[] = [];
    const unsub = subscribe({ accountId: acct }, (e) => got.push(e.id));
    const first = await nextSequence('events', 2);
    const later = await storeRaw(acct, 'payment.created', null, first + 1);
    await until(() => got.length === 1);
    const earlier = await storeRaw(acct, 'payment.created', null, first);
    await until(() => got.length === 2);
    expect(got).toEqual([later, earlier]);
    unsub();
  });

  it('fans out to thousands of subscribers by payment without scanning them all', async () => {
    await startEventBus({ hooks: runtime.hooks, mode, pollMs: 50 });
    const acct = `acct_${mode}_3`;
    const counts = new Map<string, number>();
    const unsubs: Array<() => void> = [];
    for (let i = 0; i < 4_000; i++) {
      const pay = `pay_fanout_${mode}_${i % 2_000}`;
      unsubs.push(subscribe({ accountId: acct, paymentId: pay }, () => counts.set(pay, (counts.get(pay) ?? 0) + 1)));
    }
    const target = `pay_fanout_${mode}_7`;
    await emitAccountEvent(runtime, acct, 'payment.succeeded', { id: target }, { paymentId: target });
    await until(() => counts.get(target) === 2);
    await busCaughtUp(); // and no other payment's subscribers, nor a second copy
    expect([...counts.keys()]).toEqual([target]);
    for (const u of unsubs) u();
  });
});

/**
 * Status changes that no event announces (PENDING → PROCESSING when the rail starts) reach the bus's
 * status subscribers, from this process at once and from another process through the payment's own
 * write (change stream on `payments`, or the poll fallback), once each, and never as an event.
 */
async function insertPayment(accountId: string): Promise<string> {
  const id = newId('pay');
  const now = new Date();
  await PaymentModel.create({
    _id: id, account_id: accountId, seq: 1, amount: 5000, currency: 'AOA', payment_method: 'multicaixa_express', status: 'PENDING',
    customer: { mobile: '923000000' }, created_at: now, updated_at: now,
  });
  return id;
}

/** What another gateway process's rail write looks like from here: the update, and no announcement. */
async function writeElsewhere(paymentId: string, status: string): Promise<Date> {
  const updatedAt = new Date(Date.now() + 1);
  await PaymentModel.updateOne({ _id: paymentId }, { $set: { status, updated_at: updatedAt }, $inc: { version: 1 } });
  return updatedAt;
}

function collect(paymentId: string): { changes: StatusChange[]; stop: () => void } {
  const changes: StatusChange[] = [];
  return { changes, stop: subscribeStatusChanges(paymentId, (c) => changes.push(c)) };
}

describe.each(['change_stream', 'poll'] as const)('status changes on the event bus (%s)', (mode) => {
  it("this process's own change arrives at once with the intent, another process's through the database, each once", async () => {
    expect(await startEventBus({ hooks: runtime.hooks, mode, pollMs: 50 })).toBe(mode);
    const acct = `acct_status_${mode}`;
    const [mine, theirs] = [await insertPayment(acct), await insertPayment(acct)];
    const own = collect(mine);
    const foreign = collect(theirs);
    await statusChangesReady();
    const accountEvents: BusEvent[] = [];
    const stopAccount = subscribe({ accountId: acct }, (e) => accountEvents.push(e));

    const result = await mutatePayment(runtime, mine, () => ({ set: { status: 'PROCESSING' } }), { now: new Date() });
    // Announced by the write itself, before mutatePayment returns: no database round trip.
    expect(own.changes).toHaveLength(1);
    expect(own.changes[0]).toMatchObject({ paymentId: mine, status: 'PROCESSING', intent: { id: mine, object: 'payment_intent', status: 'PROCESSING' } });
    expect(own.changes[0]!.id).toBe(statusChangeId(mine, 'PROCESSING', result.payment.updated_at));

    const updatedAt = await writeElsewhere(theirs, 'PROCESSING');
    await waitFor(async () => foreign.changes.length, (n) => n > 0);
    expect(foreign.changes).toEqual([{ id: statusChangeId(theirs, 'PROCESSING', updatedAt), paymentId: theirs, status: 'PROCESSING', intent: null }]);
    // The source that carried the other process's change has also seen ours by now (in order): still once.
    expect(own.changes).toHaveLength(1);

    // Not an event: nothing stored, nothing for the account's event subscribers.
    expect(await EventModel.countDocuments({ payment_id: { $in: [mine, theirs] } })).toBe(0);
    expect(accountEvents).toEqual([]);
    for (const stop of [own.stop, foreign.stop, stopAccount]) stop();
  });

  it('a change that emits an event, or enters a status events announce, is not a status change', async () => {
    await startEventBus({ hooks: runtime.hooks, mode, pollMs: 50 });
    const acct = `acct_status_evented_${mode}`;
    const [evented, elsewhere, signal] = [await insertPayment(acct), await insertPayment(acct), await insertPayment(acct)];
    const a = collect(evented);
    const b = collect(elsewhere);
    const c = collect(signal);
    await statusChangesReady();
    const events: BusEvent[] = [];
    const stopEvents = subscribe({ accountId: acct, paymentId: evented }, (e) => events.push(e));

    await mutatePayment(runtime, evented, () => ({ set: { status: 'CANCELLED' }, events: [{ type: 'payment.cancelled' }] }), { now: new Date() });
    await writeElsewhere(elsewhere, 'FAILED');
    // A status change written after both: once it is here, the others would have been too.
    await writeElsewhere(signal, 'PROCESSING');
    await waitFor(async () => c.changes.length, (n) => n > 0);
    expect(a.changes).toEqual([]);
    expect(b.changes).toEqual([]);
    expect(events.map((e) => e.type)).toEqual(['payment.cancelled']);
    for (const stop of [a.stop, b.stop, c.stop, stopEvents]) stop();
  });
});

describe('the change stream on payments', () => {
  it('is open only while status subscribers exist (and a linger after the last leaves), and carries changes each time it opens', async () => {
    await startEventBus({ hooks: runtime.hooks, mode: 'change_stream', statusLingerMs: 50 });
    const acct = 'acct_status_on_demand';
    const [first, second] = [await insertPayment(acct), await insertPayment(acct)];
    // Nobody follows a status: the database matches no payment write against a stream.
    expect(busStats().statusStreamOpen).toBe(false);

    const a = collect(first);
    await statusChangesReady();
    expect(busStats().statusStreamOpen).toBe(true);
    const at = await writeElsewhere(first, 'PROCESSING');
    await waitFor(async () => a.changes.length, (n) => n > 0);
    expect(a.changes).toEqual([{ id: statusChangeId(first, 'PROCESSING', at), paymentId: first, status: 'PROCESSING', intent: null }]);
    a.stop();
    await waitFor(async () => busStats().statusStreamOpen, (open) => !open);

    // A later subscriber opens it again, and the other process's change reaches it.
    const b = collect(second);
    await statusChangesReady();
    const bt = await writeElsewhere(second, 'PROCESSING');
    await waitFor(async () => b.changes.length, (n) => n > 0);
    expect(b.changes).toEqual([{ id: statusChangeId(second, 'PROCESSING', bt), paymentId: second, status: 'PROCESSING', intent: null }]);
    b.stop();
  });
});
