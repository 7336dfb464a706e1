/** The ring of recently synced writes' bytes (recentBytes.ts): never a wrong byte, the newest always kept. */
import { describe, expect, it } from 'vitest';
import { RecentBytes } from '../src/recentBytes';

describe('RecentBytes', () => {
  it('answers each slot with its last bytes or nothing, over many laps of the ring, and keeps the newest', () => {
    const size = 4096;
    const r = new RecentBytes(size);
    const latest = new Map<number, Buffer>();
    /** Slots of the writes, newest last, with their lengths. */
    const order: Array<[number, number]> = [];
    let seed = 7;
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let i = 0; i < 5000; i++) {
      const slot = rand(200);
      if (rand(10) === 0) {
        r.drop(slot);
        latest.delete(slot);
        continue;
      }
      const bytes = Buffer.alloc(1 + rand(900), i % 251);
      r.keep(slot, bytes);
      latest.set(slot, bytes);
      order.push([slot, bytes.length]);
      for (let s = 0; s < 200; s++) {
        const got = r.get(s);
        if (got !== undefined) expect(Buffer.from(got).equals(latest.get(s)!)).toBe(true);
      }
    }
    // The writes of the last half ring are all there (unless rewritten or dropped since).
    let bytes = 0;
    for (let k = order.length - 1; k >= 0 && bytes + order[k]![1] <= size / 2; k--) {
      const [slot, len] = order[k]!;
      bytes += len;
      if (latest.get(slot)?.length === len) expect(r.get(slot)).toBeDefined();
    }
  });

  it('hands out copies: a later write does not change bytes already read', () => {
    const r = new RecentBytes(64);
    r.keep(1, Buffer.alloc(16, 1));
    const read = r.get(1)!;
    for (let i = 2; i < 20; i++) r.keep(i, Buffer.alloc(16, i));
    expect(Buffer.from(read).equals(Buffer.alloc(16, 1))).toBe(true);
    expect(r.get(1)).toBeUndefined();
  });

  it('does not keep a document larger than a quarter of the ring', () => {
    const r = new RecentBytes(64);
    r.keep(1, Buffer.alloc(17));
    expect(r.get(1)).toBeUndefined();
  });
});
