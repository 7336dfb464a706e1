import path from 'node:path';
import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedMongo, type EmbeddedMongo } from '@pgw/embedded-mongo';
import { createAccount } from '../support/accounts';
import { ApiClient } from '../support/client';
import { accountEvents, createPayment, expressBody, idempotencyKey, referenceBody, waitFor } from './support/payments';
import { ROOT, spawnGateway, type GatewayProcess } from '../support/processes';
import { newTimerRecord } from '../../src/platform/timers/timerModel';

/** The real gateway plus a `test.count` timer kind, for counting handler runs. */
const COUNTING_ENTRY = path.join(ROOT, 'test/payments/support/gateway-process.ts');

/** Two gateway processes on one database: every timer fires exactly once. */
let engine: EmbeddedMongo;
let a: GatewayProcess;
let b: GatewayProcess;

beforeAll(async () => {
  engine = await startEmbeddedMongo({ port: 0 });
  [a, b] = await Promise.all([spawnGateway(engine.uri, {}, { entry: COUNTING_ENTRY }), spawnGateway(engine.uri, {}, { entry: COUNTING_ENTRY })]);
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await engine?.close();
});

describe('two gateway processes on one database', () => {
  it('run every timer exactly once and emit each payment event once', async () => {
    const account = await createAccount(a.url);
    const viaA = account.api;
    const viaB = new ApiClient(b.url, account.sk);

    const express: any[] = [];
    for (let i = 0; i < 12; i++) express.push(await createPayment(i % 2 ? viaB : viaA, expressBody(i % 3 ? '912345678' : '923000001', 1_000 + i)));
    const refs: any[] = [];
    for (let i = 0; i < 4; i++) {
      const api = i % 2 ? viaA : viaB;
      const pi = await createPayment(api, referenceBody(2_000));
      expect((await api.post('/sandbox/simulate/reference_paid', { reference: pi.reference.number })).status).toBe(200);
      const rf = await (i % 2 ? viaB : viaA).post('/refunds', { payment_intent: pi.id, amount: 500 }, { idempotencyKey: idempotencyKey() });
      expect(rf.status).toBe(201);
      refs.push(pi);
    }

    await waitFor(
      async () => (await viaA.get('/payment_intents?limit=100')).body.data as any[],
      (list) => list.every((p) => ['SUCCEEDED', 'FAILED', 'PARTIALLY_REFUNDED'].includes(p.status)),
      30_000,
      250,
    );

    const conn = await mongoose.createConnection(engine.uri).asPromise();
    try {
      // A handler's transition lands a moment before its timer is marked done: wait for the marks.
      const timers = await waitFor(
        () => conn.collection('timers').find({ account_id: account.id }).toArray(),
        (ts) => ts.filter((t) => t.state === 'done').length >= 12 * 2 + 4,
        15_000,
        100,
      );
      const fired = timers.filter((t) => t.state === 'done');
      // 12 express payments × 2 rail steps + 4 refunds; the 72 h reference expiries are still ahead.
      expect(fired).toHaveLength(12 * 2 + 4);
      for (const t of fired) expect(t.attempts, `${t.kind} ${t.ref_id}`).toBe(1);
      expect(timers.filter((t) => t.state === 'running' || t.state === 'failed')).toEqual([]);
      expect(timers.filter((t) => t.state === 'scheduled').map((t) => t.kind)).toEqual(Array(4).fill('payment.reference_expiry'));
      // Both processes did some of the work.
      expect(new Set(fired.map((t) => String(t.fired_by).split(':').slice(0, 2).join(':'))).size).toBe(2);
    } finally {
      await conn.close();
    }

    const events = await accountEvents(viaB);
    const byPayment = new Map<string, string[]>();
    /** Per object (`data.id`), the sequences of its events in the order they were stored. */
    const sequences = new Map<string, number[]>();
    for (const e of events) {
      const id = e.data.payment_intent ?? e.data.id;
      byPayment.set(id, [...(byPayment.get(id) ?? []), e.type]);
      sequences.set(e.data.id, [...(sequences.get(e.data.id) ?? []), e.sequence]);
    }
    // Written by two processes in turn, each object's events still count 1, 2, 3... in order.
    for (const [id, seen] of sequences) expect(seen, id).toEqual(seen.map((_, i) => i + 1));
    for (const [i, pi] of express.entries()) {
      expect(byPayment.get(pi.id)).toEqual(['payment.created', i % 3 ? 'payment.succeeded' : 'payment.failed']);
    }
    for (const pi of refs) {
      expect(byPayment.get(pi.id)).toEqual(['payment.created', 'reference.paid', 'payment.succeeded', 'refund.succeeded']);
    }
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
  });

  it('700 timers due at the same moment: each handler runs exactly once, shared by both processes', async () => {
    const conn = await mongoose.createConnection(engine.uri).asPromise();
    try {
      const fireAt = Date.now() + 1_500;
      // More than one process's handler slots (512, timerPoller.ts): a claim takes at most its free
      // slots, so the other process must get the rest.
      const N = 700;
      const docs = Array.from({ length: N }, (_, i) => ({
        _id: `tmr_test${String(i).padStart(20, '0')}`,
        account_id: null,
        kind: 'test.count',
        ref_id: `ref_${i}`,
        payload: { sleep_ms: 20 },
        due_at: new Date(fireAt),
        fire_at: fireAt,
        offset_ms: 0,
        state: 'scheduled',
        lease_owner: null,
        lease_until: 0,
        attempts: 0,
        last_error: null,
        fired_by: null,
        created_at: new Date(),
        done_at: null,
      }));
      await conn.collection('timers').insertMany(docs as any[]);
      const ids = docs.map((d) => d._id);
      await waitFor(
        () => conn.collection('timers').countDocuments({ _id: { $in: ids as any[] }, state: 'done' }),
        (n) => n === N,
        30_000,
        200,
      );
      const runs = await conn.collection('timer_test_runs').find({}).toArray();
      expect(runs).toHaveLength(N);
      expect(new Set(runs.map((r) => r.timer_id)).size).toBe(N);
      expect(new Set(runs.map((r) => r.pid)).size).toBe(2);
      // None ran before it was due.
      for (const r of runs) expect(new Date(r.at).getTime()).toBeGreaterThanOrEqual(fireAt);
    } finally {
      await conn.close();
    }
  });
  it('concurrent clock advances of one account on both processes run one after the other (never 429)', async () => {
    const account = await createAccount(a.url);
    const viaA = account.api;
    const viaB = new ApiClient(b.url, account.sk);
    const conn = await mongoose.createConnection(engine.uri).asPromise();
    try {
      // Fresh account, offset 0: account time = real time. The first timer keeps whichever advance
      // fires it busy for a while; the second is due only inside the span of the second advance.
      const now = Date.now();
      const timer = (n: number, dueInMs: number, sleepMs: number) =>
        newTimerRecord({ id: `tmr_clock${account.id.slice(5)}${n}`, accountId: account.id, kind: 'test.count', refId: `clock_${n}`, payload: { sleep_ms: sleepMs }, dueAt: new Date(now + dueInMs), fireAt: now + dueInMs, offsetMs: 0 });
      const docs = [timer(1, 30_000, 1_500), timer(2, 90_000, 0)];
      await conn.collection('timers').insertMany(docs as any[]);

      const answers = await Promise.all([viaA.post('/sandbox/clock/advance', { seconds: 60 }), viaB.post('/sandbox/clock/advance', { seconds: 60 })]);
      expect(answers.map((r) => r.status), answers.map((r) => r.text).join('\n')).toEqual([200, 200]);
      expect(answers.map((r) => r.body.offset_seconds).sort((x, y) => x - y)).toEqual([60, 120]);
      // Serialized: the second advance started from the first one's clock, so its span reached the
      // timer due at +90 s and fired it before answering (no waiting here).
      const fired = await conn.collection('timers').find({ _id: { $in: docs.map((d) => d._id) as any[] } }).toArray();
      expect(fired.map((t) => [t.state, t.attempts])).toEqual([['done', 1], ['done', 1]]);
      expect(await conn.collection('timer_test_runs').countDocuments({ timer_id: { $in: docs.map((d) => d._id) } })).toBe(2);
      expect((await viaB.get('/sandbox/clock')).body.offset_seconds).toBe(120);
      expect(await conn.collection('sandbox_clock_locks').findOne({ _id: account.id as any })).toBeNull();
    } finally {
      await conn.close();
    }
  });
});
