/**
 * Unit tests of the embedded engine's query planner (no server involved): lookups must use
 * the index structures, and sort+limit on an indexed field must walk the index in order.
 */
import { describe, expect, it } from 'vitest';
import { Collection } from '../../src/db/embedded/collection';
import { plan, runQuery } from '../../src/db/embedded/query';
import { canonicalKey } from '../../src/db/embedded/values';

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

  it('never uses a partial index to answer an arbitrary filter, and scans only when nothing applies', () => {
    expect(plan(c, { ref: 'x' }, undefined).description).toBe('COLLSCAN');
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
    const { compileFilter } = await import('../../src/db/embedded/query');
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
