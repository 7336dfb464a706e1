/**
 * Unit tests of the embedded engine's query planner (no server involved): lookups must use
 * the index structures, and sort+limit on an indexed field must walk the index in order.
 */
import { describe, expect, it } from 'vitest';
import { Collection } from '../src/collection';
import { execute, plan, runQuery } from '../src/query';
import { canonicalKey } from '../src/values';

function makeCollection(n: number): Collection {
  const c = new Collection('db', 'c');
  c.createIndex({ key: { email: 1 }, name: 'email_1', unique: true });
  c.createIndex({ key: { tenant: 1, createdAt: -1 }, name: 'tenant_1_createdAt_-1' });
  c.createIndex({ key: { tags: 1 }, name: 'tags_1' });
  c.createIndex({ key: { ref: 1 }, name: 'ref_1', unique: true, partialFilterExpression: { ref: { $exists: true } } });
  for (let i = 0; i < n; i++) {
    c.insert({ _id: i, email: `u${i}@x`, tenant: `t${i % 10}`, createdAt: new Date(1_700_000_000_000 + i * 1000), tags: [`g${i % 3}`, 'all'], n: i });
  }
  return c;
}

describe('query planner', () => {
  const c = makeCollection(5000);

  it('uses direct _id lookups', () => {
    expect(plan(c, { _id: 42 }, undefined).description).toBe('IDHACK');
    expect(runQuery(c, { filter: { _id: { $in: [1, 2, 99999] } } }).map((d) => d._id)).toEqual([1, 2]);
  });

  it('uses a unique index for equality and $in', () => {
    expect(plan(c, { email: 'u7@x' }, undefined).description).toBe('IXSCAN email_1');
    expect(plan(c, { email: { $in: ['u1@x', 'u2@x'] }, n: { $gte: 0 } }, undefined).description).toBe('IXSCAN email_1');
    expect(runQuery(c, { filter: { email: { $in: ['u1@x', 'u2@x'] } } }).map((d) => d.n)).toEqual([1, 2]);
  });

  it('uses a compound index prefix and serves the sort from it', () => {
    const p = plan(c, { tenant: 't3' }, [['createdAt', -1]]);
    expect(p.description).toBe('IXSCAN tenant_1_createdAt_-1 (sorted)');
    const top = runQuery(c, { filter: { tenant: 't3' }, sort: [['createdAt', -1]], limit: 3 });
    expect(top.map((d) => d.n)).toEqual([4993, 4983, 4973]);
    const asc = runQuery(c, { filter: { tenant: 't3' }, sort: [['createdAt', 1]], limit: 2 });
    expect(asc.map((d) => d.n)).toEqual([3, 13]);
  });

  it('walks an index for sort + limit without a filter', () => {
    expect(plan(c, {}, [['email', 1]]).description).toBe('IXSCAN email_1 (sort)');
    expect(plan(c, undefined, [['_id', -1]]).description).toBe('IXSCAN _id_ (sort)');
    expect(runQuery(c, { sort: [['_id', -1]], limit: 2 }).map((d) => d._id)).toEqual([4999, 4998]);
  });

  it('uses multikey indexes for equality but not for ordering', () => {
    expect(plan(c, { tags: 'g1' }, undefined).description).toBe('IXSCAN tags_1');
    expect(runQuery(c, { filter: { tags: 'g1' } }).length).toBe(1667);
    expect(plan(c, {}, [['tags', 1]]).description).toBe('COLLSCAN');
  });

  it('uses a range scan on a leading indexed field', () => {
    expect(plan(c, { email: { $gte: 'u10', $lt: 'u11' } }, undefined).description).toBe('IXSCAN email_1 (range)');
    expect(runQuery(c, { filter: { email: { $gte: 'u10', $lt: 'u11' } } }).length).toBe(111);
  });

  it('uses a partial index only when the query implies its filter, and scans only when nothing applies', () => {
    // {ref: 'x'} implies {ref: {$exists: true}}; {ref: null} does not (MongoDB's rule).
    expect(plan(c, { ref: 'x' }, undefined).description).toBe('IXSCAN ref_1');
    expect(plan(c, { ref: null }, undefined).description).toBe('COLLSCAN');
    expect(plan(c, { n: 5 }, undefined).description).toBe('COLLSCAN');
  });

  it('keeps index entries in step with updates and deletes', () => {
    const d = c.get(canonicalKey(5))!;
    c.replace(canonicalKey(5), d, { ...d, email: 'moved@x' });
    expect(runQuery(c, { filter: { email: 'u5@x' } })).toEqual([]);
    expect(runQuery(c, { filter: { email: 'moved@x' } }).map((x) => x._id)).toEqual([5]);
    c.delete(canonicalKey(5));
    expect(runQuery(c, { filter: { email: 'moved@x' } })).toEqual([]);
    expect(runQuery(c, { filter: { tenant: 't5' } }).length).toBe(499);
  });
});

describe('query planner: equality prefix then a range', () => {
  // Like the timer poller's claim: most documents share the prefix, few are in the range.
  const c = new Collection('db', 'timers');
  c.createIndex({ key: { state: 1, fire_at: 1 }, name: 'state_1_fire_at_1' });
  c.createIndex({ key: { tenant: 1, at: -1 }, name: 'tenant_1_at_-1' });
  for (let i = 0; i < 3000; i++) {
    c.insert({ _id: i, state: i % 3 === 0 ? 'done' : 'scheduled', fire_at: i, tenant: `t${i % 2}`, at: i });
  }

  it('scans only the slice of the prefix within the range, in index order', () => {
    const filter = { state: 'scheduled', fire_at: { $lte: 10 } };
    expect(plan(c, filter, [['fire_at', 1]]).description).toBe('IXSCAN state_1_fire_at_1 (prefix+range)');
    expect(runQuery(c, { filter, sort: [['fire_at', 1]] }).map((d) => d._id)).toEqual([1, 2, 4, 5, 7, 8, 10]);
    expect(runQuery(c, { filter: { state: 'scheduled', fire_at: { $gt: 2995 } }, sort: [['fire_at', -1]], limit: 2 }).map((d) => d._id)).toEqual([2999, 2998]);
    expect(runQuery(c, { filter: { state: 'scheduled', fire_at: { $gt: 5, $lt: 8 } } }).map((d) => d._id)).toEqual([7]);
  });

  it('respects descending components and the bounds exactly', () => {
    const filter = { tenant: 't1', at: { $gte: 11, $lt: 17 } };
    expect(plan(c, filter, undefined).description).toBe('IXSCAN tenant_1_at_-1 (prefix+range)');
    expect(runQuery(c, { filter, sort: [['at', -1]] }).map((d) => d._id)).toEqual([15, 13, 11]);
    expect(runQuery(c, { filter, sort: [['at', 1]] }).map((d) => d._id)).toEqual([11, 13, 15]);
  });
});

describe('filter matching without mingo for plain equality', () => {
  it('matches primitives exactly and leaves arrays and other values to the full matcher', async () => {
    const { compileFilter } = await import('../src/query');
    const m = compileFilter({ state: 'open', n: 3, ok: true })!;
    expect(m({ state: 'open', n: 3, ok: true, extra: 1 })).toBe(true);
    expect(m({ state: 'open', n: 4, ok: true })).toBe(false);
    expect(m({ state: 'open', n: 3 })).toBe(false);
    expect(m({ state: null, n: 3, ok: true })).toBe(false);
    // An array matches by element, as in MongoDB.
    expect(compileFilter({ tags: 'a' })!({ tags: ['b', 'a'] })).toBe(true);
    expect(compileFilter({ tags: 'c' })!({ tags: ['b', 'a'] })).toBe(false);
    expect(compileFilter({ n: 3 })!({ n: [1, 3] })).toBe(true);
  });
});

describe('query planner: choosing among candidate indexes by trial', () => {
  // Events of one account: the account prefix holds everything, each payment a handful.
  const c = new Collection('db', 'events');
  c.createIndex({ key: { account_id: 1, seq: -1 }, name: 'account_id_1_seq_-1' });
  c.createIndex({ key: { payment_id: 1, seq: 1 }, name: 'payment_id_1_seq_1' });
  c.createIndex({ key: { state: 1, fire_at: 1, created_at: 1 }, name: 'claim' });
  c.createIndex({ key: { fire_at: 1 }, name: 'live_fire_at', partialFilterExpression: { state: 'scheduled' } });
  for (let i = 0; i < 20_000; i++) {
    c.insert({ _id: i, account_id: 'a1', payment_id: `p${Math.floor(i / 4)}`, seq: i, state: i < 19_990 ? 'done' : 'scheduled', fire_at: i, created_at: i });
  }

  it('{account_id, payment_id: {$in}} sorted on seq walks the payments, not the account', () => {
    const filter = { account_id: 'a1', payment_id: { $in: ['p10', 'p4000', 'p7'] } };
    const x = execute(c, { filter, sort: [['seq', 1]] });
    expect(x.winner.description).toBe('IXSCAN payment_id_1_seq_1');
    expect(x.docs.map((d) => d._id)).toEqual([28, 29, 30, 31, 40, 41, 42, 43, 16000, 16001, 16002, 16003]);
    expect(x.stats.keys).toBe(12);
    expect(x.stats.docs).toBe(12);
  });

  it('an account listing with a limit walks the account index in order and stops', () => {
    const x = execute(c, { filter: { account_id: 'a1' }, sort: [['seq', -1]], limit: 25 });
    expect(x.winner.description).toBe('IXSCAN account_id_1_seq_-1 (sorted)');
    expect(x.docs[0]!._id).toBe(19_999);
    expect(x.stats.docs).toBe(25);
  });

  it('the candidates the trial rejects stop when it does: nobody walks the whole account', () => {
    c.createIndex({ key: { account_id: 1, state: 1, seq: -1 }, name: 'account_state_seq' });
    const x = execute(c, { filter: { account_id: 'a1' }, sort: [['seq', -1]], limit: 25 });
    expect(x.rejected.map((r) => r.description)).toContain('IXSCAN account_state_seq');
    expect(x.examined).toBeLessThan(200);
    const events = execute(c, { filter: { account_id: 'a1', payment_id: 'p7' }, sort: [['seq', 1]] });
    expect(events.docs.map((d) => d._id)).toEqual([28, 29, 30, 31]);
    expect(events.examined).toBeLessThan(100);
    c.dropIndex('account_state_seq');
  });

  it('equality prefix + range + sort on the rest of the index: in order, no sort, stops at the limit', () => {
    const x = execute(c, { filter: { state: 'scheduled', fire_at: { $lte: 19_995 } }, sort: [['fire_at', 1], ['created_at', 1]], limit: 3 });
    expect(x.winner.ordered).toBe(true);
    expect(x.docs.map((d) => d._id)).toEqual([19_990, 19_991, 19_992]);
    expect(x.stats.docs).toBeLessThanOrEqual(3 * 3);
  });

  it('a partial index whose filter the query implies is a candidate', () => {
    const x = execute(c, { filter: { state: 'scheduled', fire_at: { $gte: 19_998 } } });
    expect(x.docs.map((d) => d._id).sort()).toEqual([19_998, 19_999]);
    expect(x.stats.docs).toBeLessThanOrEqual(2);
  });
});
