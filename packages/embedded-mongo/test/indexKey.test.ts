import { Binary, Decimal128, Double, Int32, Long, MaxKey, MinKey, ObjectId, Timestamp, deserialize, serialize } from 'bson';
import { describe, expect, it } from 'vitest';
import { FieldPicker } from '../src/bsonRaw';
import { encodeEntry, encodeEntryFromBson, encodeKey, idOf, keyOf } from '../src/indexKey';
import { Index } from '../src/indexes';
import { compareValues, type Doc } from '../src/values';

/**
 * Index entries are strings compared with `<` (indexKey.ts): for every pair of values, and of key
 * tuples in either direction, the order of their encodings must be the order compareValues gives,
 * equal values must encode the same, and a tuple's prefix must be a prefix of its encoding.
 */
const VALUES: unknown[] = [
  new MinKey(),
  null,
  undefined,
  Number.NaN,
  Number.NEGATIVE_INFINITY,
  -1e300,
  -2.5,
  -1,
  Long.fromNumber(-1),
  -Number.MIN_VALUE,
  0,
  -0,
  Long.ZERO,
  Number.MIN_VALUE,
  1,
  new Int32(1),
  new Double(1),
  Decimal128.fromString('1'),
  2,
  2.5,
  1e15,
  Number.MAX_SAFE_INTEGER,
  1e300,
  Number.POSITIVE_INFINITY,
  '',
  '\0',
  '\0\0',
  '\u0001',
  '\u0001a',
  '\u0002',
  'a',
  'a\0',
  'a\u0001',
  'ab',
  'abc',
  'b',
  '\u00fe',
  '\u00ff',
  '\u0100',
  '\u0100a',
  '\uffff',
  '\ud83d\ude00',
  {},
  { a: 1 },
  { a: 1, b: 2 },
  { a: 2 },
  { a: 'x' },
  { b: 1 },
  { a: null },
  { a: { b: 1 } },
  [],
  [1],
  [1, 2],
  [1, 'a'],
  [2],
  ['a'],
  [[]],
  [null],
  new Binary(Buffer.from('')),
  new Binary(Buffer.from('ab')),
  new Binary(Buffer.from('ab'), 4),
  new Binary(Buffer.from('ac')),
  new Binary(Buffer.from('abc')),
  new ObjectId('000000000000000000000000'),
  new ObjectId('65a000000000000000000001'),
  new ObjectId('65a000000000000000000002'),
  new ObjectId('ffffffffffffffffffffffff'),
  false,
  true,
  new Date(-5),
  new Date(0),
  new Date(1700000000000),
  new Date(1700000000001),
  new Timestamp({ t: 1, i: 2 }),
  new Timestamp({ t: 1, i: 3 }),
  new Timestamp({ t: 2, i: 0 }),
  /a/,
  /a/i,
  /b/,
  new MaxKey(),
];

const show = (v: unknown): string => (typeof v === 'object' && v !== null ? `${v.constructor?.name ?? 'Object'} ${JSON.stringify(v)}` : String(v));
const sign = (x: number): number => (x < 0 ? -1 : x > 0 ? 1 : 0);
const neg = (x: number): number => (x === 0 ? 0 : -x);
const strCmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

describe('index key encoding', () => {
  it('orders single values as compareValues does, both directions', () => {
    const wrong: string[] = [];
    for (const a of VALUES) {
      for (const b of VALUES) {
        const want = sign(compareValues(a, b));
        if (strCmp(encodeKey([a], [1]), encodeKey([b], [1])) !== want) wrong.push(`${show(a)} vs ${show(b)}`);
        if (strCmp(encodeKey([a], [-1]), encodeKey([b], [-1])) !== neg(want)) wrong.push(`${show(a)} vs ${show(b)} descending`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('orders tuples component by component, with descending components, and prefixes are prefixes', () => {
    const some = VALUES.filter((_, i) => i % 3 === 0);
    const tuples: unknown[][] = [];
    for (const a of some) for (const b of some) tuples.push([a, b]);
    const wrong: string[] = [];
    for (const dirs of [[1, 1], [1, -1], [-1, 1]]) {
      const encoded = tuples.map((t) => encodeKey(t, dirs));
      const firsts = tuples.map((t) => encodeKey([t[0]], dirs));
      tuples.forEach((x, i) => {
        const what = (y: unknown[]): string => `${show(x)} vs ${show(y)} ${String(dirs)}`;
        if (!encoded[i]!.startsWith(firsts[i]!)) wrong.push(`${show(x)}: prefix`);
        tuples.forEach((y, j) => {
          const c0 = compareValues(x[0], y[0]) * dirs[0]!;
          const want = sign(c0 !== 0 ? c0 : compareValues(x[1], y[1]) * dirs[1]!);
          if (strCmp(encoded[i]!, encoded[j]!) !== want) wrong.push(what(y));
          // Only a tuple whose first component is equal starts with the other's first component.
          if (encoded[i]!.startsWith(firsts[j]!) !== (compareValues(x[0], y[0]) === 0)) wrong.push(`${what(y)}: starts with`);
        });
      });
    }
    expect(wrong).toEqual([]);
  });

  it('keeps the document id, whatever its characters, and breaks ties between equal keys with it', () => {
    const ids = ['a', 'ab', '', '\0o65a0', 'é', '\u0100x', 'x'.repeat(300), 'y'.repeat(70_000)];
    for (const id of ids) {
      const e = encodeEntry(['k', 5], [1, -1], id);
      expect(idOf(e)).toBe(id);
      expect(keyOf(e)).toBe(encodeKey(['k', 5], [1, -1]));
    }
    // Entries of different keys sort by key whatever their ids; of equal keys, each id once.
    expect(encodeEntry(['a'], [1], 'zzz') < encodeEntry(['b'], [1], 'a')).toBe(true);
    expect(encodeEntry([1], [1], 'a')).not.toBe(encodeEntry([1], [1], 'b'));
  });

  it('encodes entries straight from BSON bytes exactly as from the decoded values, or declines', () => {
    // Start-up builds entries from the stored bytes (encodeEntryFromBson); whatever it does not decline
    // must be the very string encodeEntry gives for the values a decode yields, in both directions.
    const extra = ['é', 'aé\0', '\u0001\u0000b', new Date(8.64e15 + 1), Long.fromString('9007199254740993'), Long.fromNumber(-7), -0];
    const picker = new FieldPicker(['k', 'b']);
    const at = new Int32Array(2);
    let read = 0;
    for (const v of [...VALUES, ...extra]) {
      const bytes = Buffer.from(serialize({ a: 1, k: v, b: 'x' }));
      const decoded = deserialize(bytes, { promoteLongs: true, promoteValues: true, promoteBuffers: false });
      picker.locate(bytes, 0, at);
      for (const dirs of [[1, 1], [-1, 1], [1, -1]]) {
        const raw = encodeEntryFromBson(bytes, at, dirs, false, 'id1');
        if (raw === undefined) continue;
        read++;
        expect(raw, show(v)).toBe(encodeEntry([decoded.k === undefined ? null : decoded.k, 'x'], dirs, 'id1'));
      }
    }
    expect(read).toBeGreaterThan(3 * 40); // strings, numbers, dates, booleans and null are read from the bytes
    // A missing field is null; a sparse index has no entry when every field is missing.
    const none = Buffer.from(serialize({ a: 1 }));
    picker.locate(none, 0, at);
    expect(encodeEntryFromBson(none, at, [1, 1], false, 'id2')).toBe(encodeEntry([null, null], [1, 1], 'id2'));
    expect(encodeEntryFromBson(none, at, [1, 1], true, 'id2')).toBeNull();
  });

  it('reads dotted paths and simple partial filters from BSON bytes as keysFor does on the decoded document', () => {
    const indexes = [
      new Index({ key: { 'refunds._id': 1 }, name: 'r', sparse: true }),
      new Index({ key: { 'ref.number': 1, n: -1 }, name: 'rn', unique: true, sparse: true }),
      new Index({ key: { 'a.b.c': 1 }, name: 'abc' }),
      new Index({ key: { fire_at: 1 }, name: 'f', partialFilterExpression: { state: 'scheduled' } }),
      new Index({ key: { n: 1 }, name: 'h', partialFilterExpression: { hooks_done: false, state: 'running' } }),
      new Index({ key: { n: 1 }, name: 'd', partialFilterExpression: { done_at: { $type: 'date' } } }),
      // payment_intents' search by mobile (src/domain/payments/paymentModel.ts)
      new Index({ key: { n: 1, 'ref.number': 1 }, name: 'x', partialFilterExpression: { 'ref.number': { $exists: true } } }),
      new Index({ key: { n: 1 }, name: 'xt', partialFilterExpression: { state: { $exists: true } } }),
    ];
    const docs: Doc[] = [
      {},
      { refunds: [], ref: { number: 'X1' }, n: 1, state: 'scheduled', fire_at: new Date(5), hooks_done: false },
      { refunds: [{ _id: 'r1' }], ref: { other: 1 }, n: 2, state: 'running', hooks_done: true, done_at: new Date(7) },
      { refunds: [{ _id: 'r1' }, { _id: 'r2' }], ref: 'scalar', state: ['scheduled'], hooks_done: 0, done_at: 'no' },
      { refunds: 'x', ref: { number: ['a', 'b'] }, n: 3, state: 'scheduledX', done_at: [new Date(1)] },
      { refunds: { _id: 4 }, ref: null, a: { b: { c: 'deep' } }, state: 'running', hooks_done: false },
      { a: { b: [] }, ref: { $ref: 'c', $id: 1 }, state: null, done_at: null },
      { a: { b: [{ c: 1 }, { c: 2 }] }, ref: { number: { x: 1 } }, n: 'é', state: 'runn\u00efng' },
      { a: 5, ref: { number: 2, $extra: 1 }, hooks_done: [false] },
      { ref: { number: null }, n: 4 },
      { ref: [], n: 5, state: [] },
      { ref: [{ number: 'in array' }], n: 6 },
      { ref: { deeper: { number: 1 } }, n: 7, state: undefined },
    ];
    let read = 0;
    for (const idx of indexes) {
      const fields = idx.bsonFields()!;
      const picker = new FieldPicker(fields);
      for (const [i, doc] of docs.entries()) {
        const bytes = Buffer.from(serialize(doc));
        const located = new Int32Array(picker.size);
        picker.locate(bytes, 0, located);
        const at = Int32Array.from(fields, (f) => located[picker.slotOf(f)]!);
        const raw = idx.entryFromBson(bytes, at, `d${i}`);
        if (raw === undefined) continue;
        read++;
        const decoded = deserialize(bytes, { promoteLongs: true, promoteValues: true, promoteBuffers: false });
        expect(raw === null ? [] : [raw], `${idx.name} on ${JSON.stringify(doc)}`).toEqual(idx.keysFor(decoded).map((k) => idx.entry(k, `d${i}`)));
      }
    }
    expect(read).toBeGreaterThan(50); // most of the 104 are read from the bytes; arrays and DBRefs are left to a decode
  });
});
