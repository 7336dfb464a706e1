import { describe, expect, it } from 'vitest';
import { DocStore, encodeDoc } from '../src/docStore';

const put = (s: DocStore, id: string, doc: Record<string, unknown>) => s.put(id, encodeDoc(doc));

describe('DocStore: documents as BSON bytes in slabs', () => {
  it('reads back what was written, in insertion order, through replaces and deletes', () => {
    const s = new DocStore();
    for (let i = 0; i < 100; i++) put(s, `d${i}`, { _id: `d${i}`, n: i, at: new Date(1_700_000_000_000 + i), tags: ['a', i] });
    for (let i = 0; i < 100; i += 3) put(s, `d${i}`, { _id: `d${i}`, n: -i });
    for (let i = 1; i < 100; i += 3) s.delete(`d${i}`);
    expect(s.size).toBe(100 - 33);
    expect(s.get('d0')).toEqual({ _id: 'd0', n: -0 });
    expect(s.get('d1')).toBeUndefined();
    expect(s.get('d2')).toEqual({ _id: 'd2', n: 2, at: new Date(1_700_000_000_002), tags: ['a', 2] });
    expect([...s.keys()].slice(0, 3)).toEqual(['d0', 'd2', 'd3']);
    expect([...s.values()].length).toBe(67);
  });

  it('compacts slabs whose documents were rewritten, keeping every current version', () => {
    const s = new DocStore();
    const pad = 'x'.repeat(900);
    // 4,000 documents of ~1 KB, each rewritten 5 times: without compaction ~24 MB of slabs.
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 4000; i++) put(s, `k${i}`, { _id: `k${i}`, round, pad });
    }
    const { slabBytes, liveBytes } = s.footprint;
    expect(liveBytes).toBeGreaterThan(4000 * 900);
    expect(slabBytes).toBeLessThan(liveBytes * 2);
    for (let i = 0; i < 4000; i += 97) expect(s.get(`k${i}`)).toEqual({ _id: `k${i}`, round: 5, pad });
    expect(s.stored('k1')!.length).toBe(encodeDoc({ _id: 'k1', round: 5, pad }).length);
  });

  it('keeps large documents in slabs of their own, released when they are replaced', () => {
    const s = new DocStore();
    const big = 'y'.repeat(200_000);
    for (let i = 0; i < 5; i++) put(s, 'big', { _id: 'big', big, i });
    // Only the current version's slab is held (plus none of the regular 256 KB slabs).
    expect(s.footprint.slabBytes).toBeLessThan(250_000);
    put(s, 'big', { _id: 'big', big: 'small now' });
    expect(s.footprint.slabBytes).toBe(256 * 1024);
    expect(s.get('big')).toEqual({ _id: 'big', big: 'small now' });
  });

});
