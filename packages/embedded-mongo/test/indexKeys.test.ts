import { Binary, Long, ObjectId } from 'bson';
import { describe, expect, it } from 'vitest';
import { Index, type IndexSpec } from '../src/indexes';
import { canonicalKey, getPathValues, type Doc } from '../src/values';

/**
 * Index.keysFor takes a short cut for documents with no array under an indexed path. This is the
 * general definition it must agree with: the cross product of every field's values (arrays fan out,
 * missing is null), distinct tuples, none at all for a sparse index when every field is missing.
 */
function referenceKeys(spec: IndexSpec, doc: Doc): unknown[][] {
  const perField = Object.keys(spec.key).map((f) => getPathValues(doc, f));
  if (spec.sparse && perField.every((vals) => vals.every((v) => v === undefined))) return [];
  let tuples: unknown[][] = [[]];
  for (const vals of perField) tuples = tuples.flatMap((t) => vals.map((v) => [...t, v === undefined ? null : v]));
  const seen = new Set<string>();
  return tuples.filter((t) => !seen.has(canonicalKey(t)) && seen.add(canonicalKey(t)));
}

const oid = new ObjectId('65a000000000000000000001');
const DOCS: Doc[] = [
  {},
  { a: 1 },
  { a: null },
  { a: undefined },
  { a: 'x', b: { c: 2 } },
  { a: { b: 1 } },
  { a: [] },
  { a: [1, 2, 2] },
  { a: [[1], 2] },
  { a: { b: [1, 2] } },
  { a: [{ b: 1 }, { b: 2 }, { c: 3 }] },
  { a: [{ b: [1, 1] }, 3] },
  { a: [5], b: { c: [1, 2] } },
  { a: 'x', b: { c: null } },
  { a: 'x', b: 'not an object' },
  { a: 'x', b: oid },
  { a: oid, b: { c: new Date(5) } },
  { a: new Binary(Buffer.from('ab')), b: { c: Long.fromNumber(7) } },
  { a: { '0': 'zero' }, b: { c: { d: 1 } } },
  { a: ['zero', 'one'], b: { c: 1 } },
  { a: true, b: { c: false }, e: 1 },
  JSON.parse('{"__proto__": {"b": 1}, "a": 2}') as Doc,
  Object.assign(Object.create(null) as Doc, { a: 3, b: { c: 4 } }),
];

const SPECS: IndexSpec[] = [
  { key: { a: 1 }, name: 'a' },
  { key: { a: -1 }, name: 'a_desc', sparse: true },
  { key: { 'a.b': 1 }, name: 'ab' },
  { key: { 'a.b': 1 }, name: 'ab_sparse', sparse: true },
  { key: { 'a.0': 1 }, name: 'a0' },
  { key: { a: 1, 'b.c': -1 }, name: 'a_bc' },
  { key: { a: 1, 'b.c': 1 }, name: 'a_bc_sparse', sparse: true },
  { key: { 'b.c.d': 1, a: 1, e: -1 }, name: 'bcd_a_e' },
  { key: JSON.parse('{"__proto__": 1}') as Record<string, unknown>, name: 'proto' },
  { key: JSON.parse('{"__proto__.b": 1}') as Record<string, unknown>, name: 'proto_b' },
];

describe('Index.keysFor', () => {
  for (const spec of SPECS) {
    it(`agrees with the general definition for ${JSON.stringify(spec.key)}${spec.sparse ? ' sparse' : ''}`, () => {
      for (const doc of DOCS) {
        const idx = new Index(spec);
        expect(idx.keysFor(doc), JSON.stringify(doc)).toEqual(referenceKeys(spec, doc));
      }
    });
  }

  it('marks the index multikey only when a document has several values on a path', () => {
    const idx = new Index({ key: { a: 1, 'b.c': 1 }, name: 'x' });
    idx.keysFor({ a: 1, b: { c: 2 } });
    idx.keysFor({ a: [1], b: [] });
    expect(idx.multikey).toBe(false);
    idx.keysFor({ a: 1, b: [{ c: 1 }, { c: 2 }] });
    expect(idx.multikey).toBe(true);
  });
});
