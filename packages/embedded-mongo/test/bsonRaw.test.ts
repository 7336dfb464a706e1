import { Binary, Decimal128, Long, ObjectId, Timestamp, deserialize, serialize } from 'bson';
import { describe, expect, it } from 'vitest';
import { FieldPicker, arrayOfRaw, readPutOp, recordOps, serializeWithRaw } from '../src/bsonRaw';

const OPTS = { promoteLongs: true, promoteValues: true, promoteBuffers: false } as const;

describe('raw BSON helpers', () => {
  const doc = {
    _id: new ObjectId('65a000000000000000000001'),
    s: 'olá — ação',
    empty: '',
    d: 1.5,
    negZero: -0,
    i: 42,
    big: Long.fromString('9007199254740993'),
    safeLong: Long.fromNumber(1234567890123),
    t: true,
    f: false,
    n: null,
    at: new Date(1_764_000_000_123),
    sub: { a: 1, b: ['x', { c: 2 }] },
    arr: [1, 'two', null],
    bin: new Binary(Buffer.from('abc')),
    ts: new Timestamp({ t: 1, i: 2 }),
    dec: Decimal128.fromString('1.10'),
    re: /ab+c/i,
  };
  const bytes = serialize(doc);
  const full = deserialize(bytes, OPTS);

  it('picks each top-level field exactly as a full decode reads it', () => {
    for (const name of Object.keys(doc)) {
      const picked = new FieldPicker([name]).pick(bytes);
      expect(Object.keys(picked)).toEqual([name]);
      expect(picked[name], name).toEqual(full[name]);
    }
    const several = new FieldPicker(['at', 'missing', 's', 'sub']).pick(bytes);
    expect(several).toEqual({ s: full.s, at: full.at, sub: full.sub });
  });

  it('reads a document at an offset inside a larger buffer', () => {
    const padded = Buffer.concat([Buffer.from([9, 9, 9]), Buffer.from(bytes), Buffer.from([7])]);
    expect(new FieldPicker(['i', 'at']).pick(padded, 3)).toEqual({ i: 42, at: full.at });
  });

  it('writes stored documents into records without re-encoding, and finds them again', () => {
    const op = serializeWithRaw({ o: 'put', db: 'x', c: 'y' }, [['doc', bytes]]);
    expect(deserialize(op, OPTS)).toEqual({ o: 'put', db: 'x', c: 'y', doc: full });
    const put = readPutOp(op)!;
    expect([put.db, put.c]).toEqual(['x', 'y']);
    expect(Buffer.from(put.doc)).toEqual(Buffer.from(bytes));
    expect(readPutOp(serialize({ o: 'del', db: 'x', c: 'y', id: 1 }))).toBeUndefined();
    expect(readPutOp(serialize({ o: 'put', db: 'x', c: 'y' }))).toBeUndefined();
    const record = arrayOfRaw('ops', [op, serialize({ o: 'del', id: 3 })]);
    expect(deserialize(record, OPTS)).toEqual({ ops: [{ o: 'put', db: 'x', c: 'y', doc: full }, { o: 'del', id: 3 }] });
  });

  it('finds the ops of a record without decoding it, and declines any other layout', () => {
    const put = serializeWithRaw({ o: 'put', db: 'x', c: 'y' }, [['doc', bytes]]);
    const del = serialize({ o: 'del', db: 'x', c: 'y', id: 3 });
    const record = Buffer.from(arrayOfRaw('ops', [put, del]));
    const at: number[] = [];
    expect(recordOps(record, at)).toBe(true);
    expect(at.map((p) => deserialize(record.subarray(p, p + record.readInt32LE(p)), OPTS))).toEqual([deserialize(put, OPTS), deserialize(del, OPTS)]);
    // Put ops read in place; a run of them shares its collection's name strings.
    const [a, b] = [readPutOp(record, at[0]!)!, readPutOp(Buffer.from(arrayOfRaw('ops', [put])), at[0]!)!];
    expect([a.db, a.c, Buffer.from(a.doc).equals(Buffer.from(bytes))]).toEqual(['x', 'y', true]);
    expect(b.c).toBe(a.c);
    expect(recordOps(Buffer.from(arrayOfRaw('ops', [])), at)).toBe(true);
    expect(at).toEqual([]);
    // A snapshot's meta record, other fields, a non-document op, a cut or padded record: decoded whole by the caller.
    expect(recordOps(Buffer.from(serialize({ meta: { journalGen: 1 } })), at)).toBe(false);
    expect(recordOps(Buffer.from(serialize({ ops: [del], more: 1 })), at)).toBe(false);
    expect(recordOps(Buffer.from(serialize({ ops: [1] })), at)).toBe(false);
    expect(recordOps(record.subarray(0, record.length - 1), at)).toBe(false);
    expect(recordOps(Buffer.concat([record, Buffer.from([0])]), at)).toBe(false);
  });
});
