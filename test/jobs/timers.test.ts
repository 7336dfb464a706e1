import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TimerModel, type TimerRecord } from '../../src/jobs/timers/timer.model';
import { pruneFinishedTimers } from '../../src/jobs/timers/timer.poller';
import { claimBatch } from '../../src/jobs/timers/timer.runner';
import { startTestServer, type TestServer } from '../support/server';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.stop();
});

/** Timers an hour away: the gateway's own poller never claims them during the test. */
function timer(id: string, fireAt: number, extra: Partial<TimerRecord> = {}): TimerRecord {
  return {
    _id: id,
    account_id: null,
    kind: 'test.batch',
    ref_id: `ref_${id}`,
    payload: {},
    due_at: new Date(fireAt),
    fire_at: fireAt,
    offset_ms: 0,
    state: 'scheduled',
    lease_owner: null,
    lease_until: 0,
    attempts: 0,
    claimed_at: null,
    last_error: null,
    fired_by: null,
    created_at: new Date(),
    done_at: null,
    ...extra,
  };
}

describe('batch claims', () => {
  it('two claimers racing for 60 due timers split them: each claimed once, in fire order', async () => {
    const base = Date.now() + 3_600_000;
    const run = `b${Date.now()}`;
    // Inserted out of order: the claims must come back in fire_at order all the same.
    const docs = Array.from({ length: 60 }, (_, i) => timer(`tmr_${run}_${String(59 - i).padStart(2, '0')}`, base + (59 - i)));
    await TimerModel.insertMany(docs);
    const filter = { state: 'scheduled', ref_id: { $in: docs.map((d) => d.ref_id) }, fire_at: { $lte: base + 1_000 } };
    const order = { fire_at: 1, created_at: 1 } as const;
    const claimed: TimerRecord[][] = [];
    for (let round = 0; round < 10; round++) {
      const [a, b] = await Promise.all([claimBatch(filter, order, 16), claimBatch(filter, order, 16)]);
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
    const stored = await TimerModel.find({ _id: { $in: docs.map((d) => d._id) } }).lean();
    for (const t of stored) expect(t).toMatchObject({ state: 'running', attempts: 1 });
  });
});

describe('pruning finished timers', () => {
  it('deletes done and cancelled timers older than the retention, and nothing else', async () => {
    const run = `p${Date.now()}`;
    const old = Date.now() - 48 * 3_600_000;
    const recent = Date.now() - 60_000;
    const docs = [
      timer(`tmr_${run}_old_done`, old, { state: 'done', done_at: new Date(old) }),
      timer(`tmr_${run}_old_cancelled`, old, { state: 'cancelled', done_at: new Date(old) }),
      timer(`tmr_${run}_old_failed`, old, { state: 'failed' }),
      timer(`tmr_${run}_recent_done`, recent, { state: 'done', done_at: new Date(recent) }),
      timer(`tmr_${run}_scheduled`, Date.now() + 3_600_000),
    ];
    await TimerModel.insertMany(docs);
    const deleted = await pruneFinishedTimers(Date.now() - 24 * 3_600_000);
    expect(deleted).toBeGreaterThanOrEqual(2);
    const left = (await TimerModel.find({ _id: { $in: docs.map((d) => d._id) } }, { _id: 1 }).lean()).map((d) => d._id).sort();
    expect(left).toEqual([`tmr_${run}_old_failed`, `tmr_${run}_recent_done`, `tmr_${run}_scheduled`].sort());
  });
});
