import { Query } from 'mingo';
import { describe, expect, it } from 'vitest';
import { mingoQuery } from '../src/mingoQuery';

/**
 * mingoQuery builds most queries with the query operators only (mingo's full context is copied by every
 * query it builds). Its answers must be mingo's, for every kind of query operator, and filters with an
 * aggregation expression must still work.
 */
const docs = [
  { _id: 1, state: 'PENDING', n: 5, at: new Date('2026-01-01'), tags: ['a', 'b'], items: [{ k: 'x', q: 2 }, { k: 'y', q: 9 }], nested: { end: new Date('2026-06-01'), c: 3 } },
  { _id: 2, state: 'RETRYING', n: 12, at: new Date('2027-01-01'), tags: [], items: [], nested: { c: null } },
  { _id: 3, state: 'DONE', n: null, name: 'Zé Mário', tags: ['b'], nested: {} },
  { _id: 4 },
];

const filters: Array<Record<string, unknown>> = [
  { state: { $in: ['PENDING', 'RETRYING'] } },
  { state: { $nin: ['DONE'] } },
  { n: { $gt: 4, $lte: 12 } },
  { n: { $ne: null } },
  { n: { $exists: false } },
  { at: { $lt: new Date('2026-06-01') } },
  { 'nested.end': { $gt: new Date('2026-01-01') } },
  { 'nested.c': null },
  { tags: 'b' },
  { tags: { $all: ['a', 'b'] } },
  { tags: { $size: 0 } },
  { items: { $elemMatch: { k: 'y', q: { $gte: 9 } } } },
  { 'items.q': { $gt: 5 } },
  { name: { $regex: '^zé', $options: 'i' } },
  { n: { $type: 'number' } },
  { n: { $not: { $gt: 10 } } },
  { n: { $mod: [4, 1] } },
  { $or: [{ state: 'DONE' }, { n: { $lt: 6 } }] },
  { $and: [{ n: { $gte: 5 } }, { state: { $ne: 'DONE' } }] },
  { $nor: [{ state: 'PENDING' }, { _id: 4 }] },
];

describe('mingoQuery', () => {
  it("answers as mingo's own Query for every kind of query operator", () => {
    for (const filter of filters) {
      const ours = docs.filter((d) => mingoQuery(filter).test(d)).map((d) => d._id);
      const theirs = docs.filter((d) => new Query(filter).test(d)).map((d) => d._id);
      expect(ours, JSON.stringify(filter)).toEqual(theirs);
    }
  });

  it('matches on aggregation expressions ($expr), at the top and nested in $or', () => {
    expect(docs.filter((d) => mingoQuery({ $expr: { $gt: ['$n', 10] } }).test(d)).map((d) => d._id)).toEqual([2]);
    expect(docs.filter((d) => mingoQuery({ $or: [{ _id: 4 }, { $expr: { $eq: ['$state', 'DONE'] } }] }).test(d)).map((d) => d._id)).toEqual([3, 4]);
    // A filter built on a prototype-less object (as some decoders make them) is looked into too.
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { $expr: { $eq: ['$state', 'RETRYING'] } });
    expect(docs.filter((d) => mingoQuery({ $and: [bare] }).test(d)).map((d) => d._id)).toEqual([2]);
  });
});
