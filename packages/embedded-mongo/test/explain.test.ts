/**
 * explain through the real driver, in MongoDB's shapes: the winning plan's stages and the keys and
 * documents really examined, for every command the gateway explains. The same assertions hold on a
 * real MongoDB (MONGODB_URI): they check stage names and bounds on work, not engine internals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from 'mongodb';
import { startTestDb, type TestDb } from './helpers';

let t: TestDb;
let db: Db;

beforeAll(async () => {
  t = await startTestDb('explain');
  db = t.conn.db!;
  const events = db.collection('events');
  await events.createIndex({ account_id: 1, seq: -1 });
  await events.createIndex({ payment_id: 1, seq: 1 });
  await events.createIndex({ hooks_done: 1, stored_at: 1 }, { partialFilterExpression: { hooks_done: false } });
  const docs = Array.from({ length: 4000 }, (_, i) => ({
    _id: `evt_${String(i).padStart(6, '0')}` as unknown as never,
    account_id: i % 10 === 0 ? 'small' : 'big',
    payment_id: `pay_${Math.floor(i / 4)}`,
    seq: i,
    hooks_done: i < 3990,
    stored_at: i,
  }));
  await events.insertMany(docs);
});
afterAll(async () => {
  await t.close();
});

/** All stage names of a plan tree, top first. */
function stages(plan: any): string[] {
  const out: string[] = [];
  for (let n = plan; n; n = n.inputStage ?? n.inputStages?.[0]) out.push(n.stage);
  return out;
}

async function explain(cmd: Record<string, unknown>): Promise<any> {
  return db.command({ explain: cmd, verbosity: 'executionStats' });
}

describe('explain', () => {
  it('find by _id: IDHACK (or an _id index scan) examining one key and one document', async () => {
    const x = await explain({ find: 'events', filter: { _id: 'evt_000042' } });
    expect(x.queryPlanner.namespace).toBe(`${t.dbName}.events`);
    expect(stages(x.queryPlanner.winningPlan).some((s) => s === 'IDHACK' || s === 'EXPRESS_IXSCAN' || s === 'IXSCAN')).toBe(true);
    expect(x.executionStats).toMatchObject({ executionSuccess: true, nReturned: 1, totalDocsExamined: 1 });
  });

  it('find with $in on a non-leading field sorted on seq uses {payment_id, seq}, examining only those events', async () => {
    const x = await explain({ find: 'events', filter: { account_id: 'big', payment_id: { $in: ['pay_3', 'pay_900'] } }, sort: { seq: 1 } });
    const s = stages(x.queryPlanner.winningPlan);
    expect(s).toContain('IXSCAN');
    expect(s).not.toContain('COLLSCAN');
    const ix = JSON.stringify(x.queryPlanner.winningPlan);
    expect(ix).toContain('payment_id_1_seq_1');
    expect(x.executionStats.nReturned).toBe(7); // pay_3: evt 12..15, all 'big'; pay_900: evt 3600..3603, of which 3600 is 'small'
    expect(x.executionStats.totalDocsExamined).toBeLessThanOrEqual(8);
  });

  it('find sorted with a limit walks the index in order and stops: no SORT stage', async () => {
    const x = await explain({ find: 'events', filter: { account_id: 'big' }, sort: { seq: -1 }, limit: 25 });
    const s = stages(x.queryPlanner.winningPlan);
    expect(s).not.toContain('SORT');
    expect(s).toContain('IXSCAN');
    expect(x.executionStats.nReturned).toBe(25);
    expect(x.executionStats.totalDocsExamined).toBeLessThanOrEqual(26);
  });

  it('a partial index serves a query that implies its filter', async () => {
    const x = await explain({ find: 'events', filter: { hooks_done: false, stored_at: { $lte: 3995 } } });
    expect(JSON.stringify(x.queryPlanner.winningPlan)).toContain('hooks_done_1_stored_at_1');
    expect(x.executionStats.nReturned).toBe(6);
    expect(x.executionStats.totalDocsExamined).toBe(6);
  });

  it('a filter no index serves is a COLLSCAN examining every document', async () => {
    const x = await explain({ find: 'events', filter: { stored_at: 7 } });
    expect(stages(x.queryPlanner.winningPlan)).toContain('COLLSCAN');
    expect(x.executionStats.totalDocsExamined).toBe(4000);
  });

  it('count, distinct, findAndModify, update and delete explain the same plans, and write nothing', async () => {
    const before = await db.collection('events').countDocuments({ payment_id: 'pay_5' });
    const count = await explain({ count: 'events', query: { payment_id: 'pay_5' } });
    expect(stages(count.queryPlanner.winningPlan)[0]).toMatch(/COUNT/);
    const fam = await explain({ findAndModify: 'events', query: { payment_id: 'pay_5' }, sort: { seq: 1 }, update: { $set: { x: 1 } } });
    expect(stages(fam.queryPlanner.winningPlan)[0]).toBe('UPDATE');
    expect(JSON.stringify(fam.queryPlanner.winningPlan)).toContain('payment_id_1_seq_1');
    const upd = await explain({ update: 'events', updates: [{ q: { payment_id: 'pay_5' }, u: { $set: { x: 1 } }, multi: true }] });
    expect(stages(upd.queryPlanner.winningPlan)[0]).toBe('UPDATE');
    expect(upd.executionStats.totalDocsExamined).toBeLessThanOrEqual(4);
    const del = await explain({ delete: 'events', deletes: [{ q: { payment_id: 'pay_5' }, limit: 0 }] });
    expect(stages(del.queryPlanner.winningPlan)[0]).toBe('DELETE');
    expect(await db.collection('events').countDocuments({ payment_id: 'pay_5' })).toBe(before);
    expect(await db.collection('events').countDocuments({ x: 1 })).toBe(0);
  });

  it('aggregate: the $match is planned on the indexes ($cursor stage or top-level queryPlanner)', async () => {
    const x = await explain({ aggregate: 'events', pipeline: [{ $match: { payment_id: 'pay_7' } }, { $group: { _id: null, n: { $sum: 1 } } }], cursor: {} });
    const planner = x.queryPlanner ?? x.stages?.[0]?.$cursor?.queryPlanner;
    expect(JSON.stringify(planner.winningPlan)).toContain('payment_id_1_seq_1');
    const stats = x.executionStats ?? x.stages?.[0]?.$cursor?.executionStats;
    expect(stats.totalDocsExamined).toBeLessThanOrEqual(4);
  });
});
