/**
 * The _id index builds its ordered list only when a query first needs _id order (see Index's
 * `deferredFrom`). Whatever happened to the collection before and after that moment, _id-ordered
 * queries must see exactly what an index kept in order from the start would give.
 */
import { Long, ObjectId } from 'bson';
import { describe, expect, it } from 'vitest';
import { Collection } from '../src/collection';
import { plan, runQuery } from '../src/query';
import { canonicalKey, compareValues, type Doc } from '../src/values';

const IDS: unknown[] = [
  5,
  'b',
  new ObjectId('65a000000000000000000002'),
  -1.5,
  'a',
  Long.fromNumber(7),
  new Date(3),
  new ObjectId('65a000000000000000000001'),
  true,
  null,
  { x: 1 },
  'ab',
  0,
];

/** What the _id-ordered reads return, checked against the stored documents sorted by _id. */
function check(c: Collection): void {
  const docs = [...c.values()];
  const asc = docs.map((d) => d._id).sort(compareValues);
  const desc = [...asc].reverse();
  expect(plan(c, undefined, [['_id', 1]]).description).toBe('IXSCAN _id_ (sort)');
  expect(runQuery(c, { sort: [['_id', 1]] }).map((d) => d._id)).toEqual(asc);
  expect(runQuery(c, { sort: [['_id', -1]], limit: 3 }).map((d) => d._id)).toEqual(desc.slice(0, 3));
  const inRange = (v: unknown) => typeof v === 'number' && v > -2 && v <= 5;
  expect(runQuery(c, { filter: { _id: { $gt: -2, $lte: 5 } } }).map((d) => d._id)).toEqual(asc.filter(inRange));
  expect(runQuery(c, { filter: { _id: { $gte: 'a' } }, sort: [['_id', 1]] }).map((d) => d._id)).toEqual(
    asc.filter((v) => typeof v === 'string'),
  );
}

function fill(c: Collection, ids: unknown[], tag: string): void {
  for (const _id of ids) c.insert({ _id, tag });
}

describe('_id order built on first use', () => {
  it('matches the documents when first needed after inserts, replaces and deletes', () => {
    const c = new Collection('db', 'c');
    fill(c, IDS, 'v1');
    const five = c.get(c.insert({ _id: 55, tag: 'x' }))!;
    c.replace(canonicalKey(55), five, { _id: 55, tag: 'y' });
    c.delete(canonicalKey(55));
    c.delete(canonicalKey('a'));
    check(c);
  });

  it('keeps the order up to date once built', () => {
    const c = new Collection('db', 'c');
    fill(c, IDS.slice(0, 6), 'v1');
    check(c);
    fill(c, IDS.slice(6), 'v1');
    fill(c, [100, 'zz', -100], 'v2');
    c.delete(canonicalKey('b'));
    c.forcePut({ _id: 'b', tag: 'restored' });
    c.forcePut({ _id: 100, tag: 'replaced' });
    check(c);
  });

  it('treats equal numbers of different types as one _id', () => {
    const c = new Collection('db', 'c');
    c.insert({ _id: 1, t: 'int' });
    expect(() => c.insert({ _id: Long.fromNumber(1) })).toThrow(/E11000/);
    expect(() => c.insert({ _id: 1.0 })).toThrow(/E11000/);
    check(c);
    expect(runQuery(c, { filter: { _id: { $gte: 1 } } }).map((d: Doc) => d.t)).toEqual(['int']);
  });

  it('is empty after clear, before or after it was built', () => {
    for (const built of [false, true]) {
      const c = new Collection('db', 'c');
      fill(c, IDS, 'v1');
      if (built) check(c);
      c.clear();
      expect(runQuery(c, { sort: [['_id', 1]] })).toEqual([]);
      fill(c, [3, 1, 2], 'v2');
      check(c);
    }
  });
});
