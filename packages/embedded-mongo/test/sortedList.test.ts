import { describe, expect, it } from 'vitest';
import { SortedList } from '../src/sortedList';

/** Deterministic PRNG (mulberry32) so a failure reproduces. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const byNumber = (a: number, b: number) => a - b;

/** Applies the same inserts/removes to a SortedList and a plain sorted array and compares them. */
function check(ops: Array<['+' | '-', number]>): void {
  const list = new SortedList<number>(byNumber);
  const ref: number[] = [];
  for (const [op, v] of ops) {
    const at = ref.findIndex((x) => x >= v);
    const present = at >= 0 && ref[at] === v;
    if (op === '+') {
      if (present) continue; // index entries are unique (the id breaks ties)
      list.insert(v);
      ref.splice(at < 0 ? ref.length : at, 0, v);
    } else {
      expect(list.remove(v)).toBe(present);
      if (present) ref.splice(at, 1);
    }
  }
  expect(list.size).toBe(ref.length);
  expect([...list]).toEqual(ref);
  expect([...list.backFrom(list.endCursor())]).toEqual([...ref].reverse());
  // lowerBound / upperBound agree with the reference at a few probes, present or not.
  for (const p of [-1, 0, 1, 500, 777.5, 1500, 5000, 1e9]) {
    const lo = ref.findIndex((x) => x >= p);
    expect([...list.from(list.lowerBound((x) => x - p))]).toEqual(lo < 0 ? [] : ref.slice(lo));
    const hi = ref.findIndex((x) => x > p);
    expect([...list.from(list.upperBound((x) => x - p))]).toEqual(hi < 0 ? [] : ref.slice(hi));
  }
}

describe('SortedList', () => {
  it('keeps order when every insert sorts last (the append fast path), across block splits', () => {
    check(Array.from({ length: 3000 }, (_, i) => ['+', i] as ['+', number]));
  });

  it('keeps order when every insert sorts first', () => {
    check(Array.from({ length: 3000 }, (_, i) => ['+', 3000 - i] as ['+', number]));
  });

  it('keeps order under random inserts and removes, present or not', () => {
    for (const seed of [1, 2, 3]) {
      const rnd = prng(seed);
      const ops: Array<['+' | '-', number]> = [];
      for (let i = 0; i < 6000; i++) ops.push([rnd() < 0.65 ? '+' : '-', Math.floor(rnd() * 4000)]);
      check(ops);
    }
  });

  it('empties blocks and the whole list, then fills again', () => {
    const ops: Array<['+' | '-', number]> = [];
    for (let i = 0; i < 1200; i++) ops.push(['+', i]);
    for (let i = 0; i < 1200; i++) ops.push(['-', (i * 7) % 1200]);
    ops.push(['-', 3], ['+', 5], ['+', 2], ['-', 5], ['+', 9]);
    check(ops);
  });

  it('remove on an empty list, and of values beyond either end', () => {
    const list = new SortedList<number>(byNumber);
    expect(list.remove(1)).toBe(false);
    list.insert(5);
    expect(list.remove(9)).toBe(false);
    expect(list.remove(1)).toBe(false);
    expect(list.remove(5)).toBe(true);
    expect([...list]).toEqual([]);
  });
});
