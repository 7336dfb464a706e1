/**
 * Operator updates copy on write: the result shares every subtree the update does not write with the
 * stored version. These tests pin down that the stored version is never written to (it is deep-frozen
 * here, so any write throws), that the results are what the operators define, and that indexes stay
 * right after such updates (unique conflicts, sparse, multikey, compound and descending keys).
 */
import { Long } from 'bson';
import { describe, expect, it } from 'vitest';
import { Collection } from '../src/collection';
import { runQuery } from '../src/query';
import { applyUpdate } from '../src/update';
import { canonicalKey, deepClone, type Doc } from '../src/values';

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v as object)) deepFreeze(x);
  }
  return v;
}

const base = (): Doc => ({
  _id: 'd1',
  a: 1,
  n: { x: 1, deep: { y: [1, 2, 3] }, list: [{ k: 1, v: 'a' }, { k: 2, v: 'b' }] },
  tags: ['a', 'b', 'c'],
  items: [{ _id: 'i1', q: 1 }, { _id: 'i2', q: 2 }, { _id: 'i3', q: 3 }],
  when: new Date(5),
  big: Long.fromNumber(10),
});

const CASES: Array<[string, Doc, Doc | undefined, (d: Doc) => void]> = [
  ['$set top-level and nested', { $set: { a: 2, 'n.x': 5, 'n.new.z': true } }, undefined, (d) => {
    d.a = 2;
    (d.n as Doc).x = 5;
    (d.n as Doc).new = { z: true };
  }],
  ['$set into an array element', { $set: { 'items.1.q': 20, 'tags.5': 'f' } }, undefined, (d) => {
    ((d.items as Doc[])[1] as Doc).q = 20;
    (d.tags as unknown[]).push(null, null, 'f');
  }],
  ['$unset nested and in arrays', { $unset: { 'n.deep.y': '', 'tags.1': '', 'n.missing.z': '' } }, undefined, (d) => {
    delete ((d.n as Doc).deep as Doc).y;
    (d.tags as unknown[])[1] = null;
  }],
  ['$inc $mul $min $max', { $inc: { a: 1, 'n.deep.count': 2, big: 1 }, $mul: { 'n.x': 3 }, $min: { 'items.0.q': 0 }, $max: { when: new Date(9) } }, undefined, (d) => {
    d.a = 2;
    ((d.n as Doc).deep as Doc).count = 2;
    d.big = Long.fromNumber(11);
    (d.n as Doc).x = 3;
    ((d.items as Doc[])[0] as Doc).q = 0;
    d.when = new Date(9);
  }],
  ['$push $addToSet $pop $pull $pullAll', {
    $push: { 'n.deep.y': { $each: [4, 5], $slice: -4 } },
    $addToSet: { tags: { $each: ['c', 'd'] } },
    $pop: { 'n.list': -1 },
    $pull: { items: { _id: { $in: ['i1', 'i3'] } } },
  }, undefined, (d) => {
    ((d.n as Doc).deep as Doc).y = [2, 3, 4, 5];
    (d.tags as unknown[]).push('d');
    ((d.n as Doc).list as unknown[]).shift();
    d.items = [{ _id: 'i2', q: 2 }];
  }],
  ['$pullAll', { $pullAll: { tags: ['a', 'c'] } }, undefined, (d) => {
    d.tags = ['b'];
  }],
  ['$rename a subtree, then write into it', { $rename: { n: 'm' }, $set: { 'm.x': 9, 'm.deep.y.0': 0 } }, undefined, (d) => {
    const n = d.n as Doc;
    delete d.n;
    n.x = 9;
    ((n.deep as Doc).y as number[])[0] = 0;
    d.m = n;
  }],
  ['positional $ and $[]', { $set: { 'items.$.q': 99, 'n.list.$[].v': 'z' } }, { 'items._id': 'i2' }, (d) => {
    ((d.items as Doc[])[1] as Doc).q = 99;
    for (const e of (d.n as Doc).list as Doc[]) e.v = 'z';
  }],
  ['several writes through one parent', { $set: { 'n.deep.p': 1, 'n.deep.q': 2 }, $inc: { 'n.x': 1 }, $push: { 'n.list': { k: 3 } } }, undefined, (d) => {
    const n = d.n as Doc;
    (n.deep as Doc).p = 1;
    (n.deep as Doc).q = 2;
    n.x = 2;
    (n.list as Doc[]).push({ k: 3 });
  }],
];

describe('operator updates copy on write', () => {
  for (const [name, update, filter, expectChange] of CASES) {
    it(name, () => {
      const stored = deepFreeze(base());
      const out = applyUpdate(stored, update, { filter, isInsert: false });
      const expected = deepClone(base());
      expectChange(expected);
      expect(out).toEqual(expected);
      expect(Object.keys(out)).toEqual(Object.keys(expected));
      expect(stored).toEqual(base());
      // What the update did not write is shared, not copied.
      for (const k of Object.keys(stored)) {
        if (JSON.stringify(update).includes(`"${k}`) || typeof stored[k] !== 'object') continue;
        expect(out[k], k).toBe(stored[k]);
      }
    });
  }

  it('gives each document of a multi update its own copy of a $set value', () => {
    const u = { $set: { o: { p: 1 } } };
    const a = applyUpdate(deepFreeze(base()), u, { filter: undefined, isInsert: false });
    const b = applyUpdate(deepFreeze({ ...base(), _id: 'd2' }), u, { filter: undefined, isInsert: false });
    expect(a.o).toEqual({ p: 1 });
    expect(a.o).not.toBe(b.o);
    expect(a.o).not.toBe(u.$set.o);
  });
});

/** Ids found through each index for the given filter, to compare with a scan of the documents. */
function ids(c: Collection, filter: Doc, sort?: Array<[string, 1 | -1]>): unknown[] {
  return runQuery(c, { filter, sort }).map((d) => d._id);
}

function update(c: Collection, id: string, u: Doc): Doc {
  const before = c.get(canonicalKey(id))!;
  const after = applyUpdate(before, u, { filter: { _id: id }, isInsert: false });
  c.replace(canonicalKey(id), before, after);
  return after;
}

describe('indexes after copy-on-write updates', () => {
  function collection(): Collection {
    const c = new Collection('db', 'c');
    c.createIndex({ key: { 'ref.number': 1 }, name: 'ref', unique: true, sparse: true });
    c.createIndex({ key: { 'outbox.at': 1 }, name: 'outbox', sparse: true });
    c.createIndex({ key: { owner: 1, seq: -1 }, name: 'owner_seq' });
    c.createIndex({ key: { flag: 1, 'meta.at': -1 }, name: 'flag_at' });
    for (let i = 0; i < 20; i++) {
      c.insert({
        _id: `d${i}`,
        owner: `o${i % 3}`,
        seq: i,
        flag: false,
        meta: { at: i, note: 'x' },
        ref: i % 2 ? { number: `r${i}` } : null,
        outbox: i % 4 ? [] : [{ _id: `e${i}`, at: 100 + i }, { _id: `f${i}`, at: 200 + i }],
      });
    }
    return c;
  }

  it('maintains sparse multikey keys when an array is pulled from or pushed to', () => {
    const c = collection();
    expect(ids(c, { 'outbox.at': { $gte: 100 } }, [['_id', 1]])).toEqual(['d0', 'd12', 'd16', 'd4', 'd8']);
    update(c, 'd4', { $pull: { outbox: { _id: { $in: ['e4', 'f4'] } } } });
    update(c, 'd8', { $pull: { outbox: { _id: 'e8' } } });
    update(c, 'd5', { $push: { outbox: { _id: 'e5', at: 500 } } });
    expect(ids(c, { 'outbox.at': { $gte: 100 } }, [['_id', 1]])).toEqual(['d0', 'd12', 'd16', 'd5', 'd8']);
    expect(ids(c, { 'outbox.at': 108 })).toEqual([]);
    expect(ids(c, { 'outbox.at': 208 })).toEqual(['d8']);
  });

  it('maintains compound and descending keys when one of their fields changes', () => {
    const c = collection();
    update(c, 'd3', { $set: { flag: true } });
    update(c, 'd6', { $set: { flag: true, 'meta.at': 50 } });
    update(c, 'd9', { $set: { 'meta.note': 'y' } }); // under an indexed root, but not an indexed path
    update(c, 'd1', { $set: { seq: 100 } });
    expect(ids(c, { flag: true }, [['meta.at', -1]])).toEqual(['d6', 'd3']);
    expect(ids(c, { flag: false }, [['meta.at', -1]]).slice(0, 3)).toEqual(['d19', 'd18', 'd17']);
    expect(ids(c, { owner: 'o1' }, [['seq', -1]]).slice(0, 2)).toEqual(['d1', 'd19']);
    expect(ids(c, { owner: 'o1', seq: 1 })).toEqual([]);
  });

  it('refuses a unique conflict created by an update and changes nothing', () => {
    const c = collection();
    const before = c.get(canonicalKey('d3'))!;
    const after = applyUpdate(before, { $set: { 'ref.number': 'r5', flag: true } }, { filter: undefined, isInsert: false });
    expect(() => c.replace(canonicalKey('d3'), before, after)).toThrow(/E11000.*ref/);
    expect(c.get(canonicalKey('d3'))).toBe(before);
    expect(ids(c, { 'ref.number': 'r3' })).toEqual(['d3']);
    expect(ids(c, { flag: true })).toEqual([]);
    // Moving the number away frees it; another document can then take it.
    update(c, 'd5', { $set: { 'ref.number': 'r5b' } });
    update(c, 'd3', { $set: { 'ref.number': 'r5' } });
    expect(ids(c, { 'ref.number': 'r5' })).toEqual(['d3']);
    expect(ids(c, { 'ref.number': 'r3' })).toEqual([]);
    // An update that leaves ref alone is no conflict with itself.
    update(c, 'd3', { $set: { flag: true } });
    expect(ids(c, { 'ref.number': 'r5' })).toEqual(['d3']);
  });

  it('matches indexes rebuilt from scratch after a run of updates', () => {
    const c = collection();
    for (let i = 0; i < 40; i++) {
      const id = `d${(i * 7) % 20}`;
      if (i % 3 === 0) update(c, id, { $set: { flag: i % 2 === 0 }, $inc: { seq: 20 } });
      else if (i % 3 === 1) update(c, id, { $push: { outbox: { _id: `p${i}`, at: i } } });
      else update(c, id, { $pull: { outbox: { at: { $lt: 150 } } }, $set: { 'meta.at': i } });
    }
    const fresh = new Collection('db', 'fresh');
    for (const idx of c.indexes.values()) if (!idx.isId) fresh.createIndex(idx.spec);
    for (const d of c.values()) fresh.insert(d);
    for (const [filter, sort] of [
      [{ 'outbox.at': { $gte: 0 } }, [['_id', 1]]],
      [{ flag: true }, [['meta.at', -1]]],
      [{ flag: false }, [['meta.at', -1]]],
      [{ owner: 'o2' }, [['seq', -1]]],
      [{ 'ref.number': { $gte: 'r' } }, [['_id', 1]]],
    ] as Array<[Doc, Array<[string, 1 | -1]>]>) {
      expect(ids(c, filter, sort), JSON.stringify(filter)).toEqual(ids(fresh, filter, sort));
    }
    // Entry for entry: a stale entry would be filtered out of query results, not here.
    for (const idx of c.indexes.values()) {
      expect([...idx.scanPrefix([], false)], idx.name).toEqual([...fresh.indexes.get(idx.name)!.scanPrefix([], false)]);
    }
  });
});
