import { MongoClient, type Collection } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedMongo, type EmbeddedMongo } from '@pgw/embedded-mongo';
import { TimerModel, newTimerRecord, type TimerRecord } from '../../src/platform/timers/timerModel';
import { claimBatch } from '../../src/platform/timers/timerRunner';
import { scheduleTimer } from '../../src/platform/timers/timerService';
import { startTestServer, type TestServer } from '../support/server';
import { waitFor } from '../support/wait';

/**
 * The timer service over its own engine, whose TTL monitor runs every 100 ms (on a real MongoDB,
 * MONGODB_URI, a pass every second is asked for), so retention can be watched at work.
 */
const EXTERNAL_URI = process.env.MONGODB_URI || undefined;
let engine: EmbeddedMongo | undefined;
let server: TestServer;
let client: MongoClient;
let timers: Collection<TimerRecord>;

beforeAll(async () => {
  engine = EXTERNAL_URI ? undefined : await startEmbeddedMongo({ ttlMonitorIntervalMs: 100 });
  const uri = EXTERNAL_URI ?? engine!.uri;
  server = await startTestServer({ MONGODB_URI: uri });
  // The store is inspected on a connection of its own, not through the gateway's models.
  client = await new MongoClient(uri).connect();
  timers = client.db(TimerModel.db.name).collection<TimerRecord>('timers');
  if (EXTERNAL_URI) await client.db('admin').command({ setParameter: 1, ttlMonitorSleepSecs: 1 }).catch(() => undefined);
}, 30_000);
afterAll(async () => {
  await client.close();
  await server.stop();
  await engine?.close();
});

const HOUR = 3_600_000;

/** Timers an hour away unless told otherwise: the gateway's own poller never claims them during the test. */
function timer(id: string, fireAt: number, extra: Partial<TimerRecord> = {}): TimerRecord {
  const base = newTimerRecord({ id, accountId: null, kind: 'test.batch', refId: `ref_${id}`, dueAt: new Date(fireAt), fireAt, offsetMs: 0 });
  return { ...base, ...extra };
}

describe('batch claims', () => {
  it('two claimers racing for 60 due timers split them: each claimed once, in fire order, as stored', async () => {
    const base = Date.now() + HOUR;
    const run = `b${Date.now()}`;
    // Inserted out of order: the claims must come back in fire_at order all the same.
    const docs = Array.from({ length: 60 }, (_, i) => timer(`tmr_${run}_${String(59 - i).padStart(2, '0')}`, base + (59 - i)));
    await timers.insertMany(docs);
    const filter = { state: 'scheduled', ref_id: { $in: docs.map((d) => d.ref_id) }, fire_at: { $lte: base + 1_000 } };
    const order = { fire_at: 1, created_at: 1 } as const;
    const claimed: TimerRecord[][] = [];
    for (let round = 0; round < 10; round++) {
      // Overlapping batches of different sizes: one claimer often gets only part of what it read.
      const [a, b] = await Promise.all([claimBatch(filter, order, 16), claimBatch(filter, order, 24)]);
      claimed.push(a, b);
      if (a.length === 0 && b.length === 0) break;
    }
    const all = claimed.flat();
    expect(all).toHaveLength(60);
    expect(new Set(all.map((t) => t._id)).size).toBe(60);
    for (const batch of claimed) {
      const fires = batch.map((t) => t.fire_at);
      expect(fires).toEqual([...fires].sort((x, y) => x - y));
    }
    const stored = await timers.find({ _id: { $in: docs.map((d) => d._id) } }).toArray();
    const returned = new Map(all.map((t) => [t._id, t]));
    for (const t of stored) {
      expect(t).toMatchObject({ state: 'running', attempts: 1 });
      // What a claim hands its handlers is what it stored, whether read back or not.
      const r = returned.get(t._id)!;
      expect({ ...r, claimed_at: r.claimed_at?.getTime() }).toEqual({ ...t, claimed_at: t.claimed_at?.getTime() });
    }
  });

  it('the claim reads only due scheduled timers, in index order: finished ones are not in its index', async () => {
    const run = `i${Date.now()}`;
    const past = Date.now() - 60_000;
    // Many finished timers due long ago, and a few scheduled ones due an hour from now.
    await timers.insertMany([
      ...Array.from({ length: 300 }, (_, i) => timer(`tmr_${run}_done_${i}`, past + i, { state: 'done', done_at: new Date() })),
      ...Array.from({ length: 300 }, (_, i) => timer(`tmr_${run}_cancelled_${i}`, past + i, { state: 'cancelled', done_at: new Date() })),
      ...Array.from({ length: 5 }, (_, i) => timer(`tmr_${run}_later_${i}`, Date.now() + HOUR + i)),
    ]);
    const x = await client
      .db(TimerModel.db.name)
      .command({ explain: { find: 'timers', filter: { state: 'scheduled', fire_at: { $lte: Date.now() } }, sort: { fire_at: 1, created_at: 1 }, limit: 64 }, verbosity: 'executionStats' });
    const claimIndex = (await timers.indexes()).find((i) => i.name === 'scheduled_by_fire_at');
    expect(claimIndex).toMatchObject({ key: { fire_at: 1, created_at: 1 }, partialFilterExpression: { state: 'scheduled' } });
    const plan = JSON.stringify(x.queryPlanner.winningPlan);
    expect(plan).toContain('scheduled_by_fire_at');
    expect(plan).not.toContain('"SORT"');
    expect(plan).not.toContain('COLLSCAN');
    // None of the 600 finished timers is even looked at.
    expect(x.executionStats.totalDocsExamined).toBeLessThanOrEqual(x.executionStats.nReturned + 1);
    expect(x.executionStats.totalKeysExamined).toBeLessThanOrEqual(x.executionStats.nReturned + 1);
  });
});

describe('running due timers', () => {
  const ran = new Map<string, number>();
  // On the test gateway's registry, once it has started.
  beforeAll(() =>
    server.gateway.runtime.timers.register('test.drain', async (t) => {
      ran.set(t.id, (ran.get(t.id) ?? 0) + 1);
    }),
  );

  it('1 000 timers due within a second all fire, each once, and are marked done', async () => {
    const run = `d${Date.now()}`;
    const due = Date.now() + 300;
    const ids = await Promise.all(
      Array.from({ length: 1_000 }, async (_, i) => (await scheduleTimer({ accountId: null, kind: 'test.drain', refId: `${run}_${i}`, dueAt: new Date(due + (i % 700)) })).id),
    );
    const done = await waitFor(() => timers.countDocuments({ _id: { $in: ids }, state: 'done' }), (n) => n === ids.length, 20_000);
    expect(done).toBe(ids.length);
    for (const id of ids) expect(ran.get(id)).toBe(1);
    const stored = await timers.find({ _id: { $in: ids } }).toArray();
    for (const t of stored) {
      expect(t).toMatchObject({ state: 'done', attempts: 1, lease_until: 0 });
      expect(t.fired_by).toEqual(expect.any(String));
      expect(t.done_at).toBeInstanceOf(Date);
      // Never before its time.
      expect(t.claimed_at!.getTime()).toBeGreaterThanOrEqual(t.fire_at);
    }
  });

  it('a timer whose lease expired (its process died mid-handler) is run again by another claim', async () => {
    const id = `tmr_lease_${Date.now()}`;
    await timers.insertOne(
      timer(id, Date.now() - 40_000, { kind: 'test.drain', state: 'running', attempts: 1, lease_owner: 'dead-process', lease_until: Date.now() - 1, claimed_at: new Date(Date.now() - 31_000) }),
    );
    const t = await waitFor(() => timers.findOne({ _id: id }), (d) => d?.state === 'done', 10_000);
    expect(t).toMatchObject({ state: 'done', attempts: 2 });
    expect(t!.fired_by).not.toBe('dead-process');
    expect(ran.get(id)).toBe(1);
  });
});

describe("a running timer's account clock", () => {
  const seen = new Map<string, { offsetMs: number | undefined; now: number }>();
  beforeAll(() =>
    server.gateway.runtime.timers.register('test.clock', async (t, ctx) => {
      seen.set(t.id, { offsetMs: ctx.offsetMs, now: ctx.now.getTime() });
    }),
  );
  const DAY = 86_400_000;
  // An account that does not exist reads as offset 0, so the offset the handler gets says where it came from.
  const clockTimer = (id: string, extra: Partial<TimerRecord>) => ({
    ...newTimerRecord({ id, accountId: 'acct_clock_source', kind: 'test.clock', refId: id, dueAt: new Date(Date.now() + DAY), fireAt: Date.now(), offsetMs: DAY }),
    ...extra,
  });

  it('is the offset the claim found on the scheduled timer (every clock shift moves it), not a read of the account', async () => {
    const id = `tmr_clock_${Date.now()}`;
    await timers.insertOne(clockTimer(id, {}));
    await waitFor(() => timers.findOne({ _id: id }), (d) => d?.state === 'done', 10_000);
    expect(seen.get(id)?.offsetMs).toBe(DAY);
    // Account time: real time + the offset, never before the timer's due time.
    expect(seen.get(id)!.now).toBeGreaterThanOrEqual(Date.now() + DAY - 10_000);
  });

  it("is read from the account for a timer recovered from a dead process (a shift may have come since it was claimed)", async () => {
    const id = `tmr_clock_rec_${Date.now()}`;
    await timers.insertOne(
      clockTimer(id, { state: 'running', attempts: 1, lease_owner: 'dead-process', lease_until: Date.now() - 1, claimed_at: new Date(Date.now() - 31_000) }),
    );
    await waitFor(() => timers.findOne({ _id: id }), (d) => d?.state === 'done', 10_000);
    expect(seen.get(id)?.offsetMs).toBe(0);
  });
});

describe('retention of finished timers', () => {
  it('done and cancelled timers past TIMER_RETENTION_HOURS are deleted by the TTL index; failed, recent and live ones stay', { timeout: 120_000 }, async () => {
    const run = `p${Date.now()}`;
    const old = Date.now() - 48 * HOUR;
    const recent = Date.now() - 60_000;
    const docs = [
      timer(`tmr_${run}_old_done`, old, { state: 'done', done_at: new Date(old) }),
      timer(`tmr_${run}_old_cancelled`, old, { state: 'cancelled', done_at: new Date(old) }),
      timer(`tmr_${run}_old_failed`, old, { state: 'failed' }),
      timer(`tmr_${run}_recent_done`, recent, { state: 'done', done_at: new Date(recent) }),
      timer(`tmr_${run}_scheduled`, Date.now() + HOUR),
    ];
    await timers.insertMany(docs);
    const ids = docs.map((d) => d._id);
    const left = await waitFor(
      async () => (await timers.find({ _id: { $in: ids } }, { projection: { _id: 1 } }).toArray()).map((d) => d._id).sort(),
      (l) => l.length === 3,
      EXTERNAL_URI ? 90_000 : 10_000,
    );
    expect(left).toEqual([`tmr_${run}_old_failed`, `tmr_${run}_recent_done`, `tmr_${run}_scheduled`].sort());
  });
});
