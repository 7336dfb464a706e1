/**
 * Sorted list kept as an array of small sorted blocks (like Python's SortedList): inserts and
 * deletes cost O(log n + block size) instead of shifting one huge array, and iteration in order
 * (or reverse order) from any lower bound is cheap. Used as the ordered structure of every index.
 */
const MAX_BLOCK = 512;

export interface Cursor {
  block: number;
  index: number;
}

export class SortedList<T> {
  private blocks: T[][] = [];
  private count = 0;

  constructor(private readonly cmp: (a: T, b: T) => number) {}

  get size(): number {
    return this.count;
  }

  /** First block whose last element is >= probe (by `cmp`). */
  private findBlock(probe: (item: T) => number): number {
    let lo = 0;
    let hi = this.blocks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const blk = this.blocks[mid]!;
      if (probe(blk[blk.length - 1]!) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Position of the first element for which probe(element) >= 0, where probe is monotone
   * (negative for elements before the target range).
   */
  lowerBound(probe: (item: T) => number): Cursor {
    const b = this.findBlock(probe);
    if (b === this.blocks.length) return { block: b, index: 0 };
    const blk = this.blocks[b]!;
    let lo = 0;
    let hi = blk.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (probe(blk[mid]!) < 0) lo = mid + 1;
      else hi = mid;
    }
    return { block: b, index: lo };
  }

  /** Position of the first element for which probe(element) > 0. */
  upperBound(probe: (item: T) => number): Cursor {
    return this.lowerBound((item) => (probe(item) <= 0 ? -1 : 1));
  }

  insert(item: T): void {
    const cmp = this.cmp;
    if (this.blocks.length === 0) {
      this.blocks.push([item]);
      this.count = 1;
      return;
    }
    const pos = this.lowerBound((x) => cmp(x, item));
    let b = pos.block;
    let i = pos.index;
    if (b === this.blocks.length) {
      b = this.blocks.length - 1;
      i = this.blocks[b]!.length;
    }
    const blk = this.blocks[b]!;
    if (i === blk.length) blk.push(item);
    else blk.splice(i, 0, item);
    this.count++;
    if (blk.length > MAX_BLOCK) {
      this.blocks.splice(b + 1, 0, blk.splice(MAX_BLOCK >>> 1));
    }
  }

  /** Removes the element equal (cmp === 0) to item; returns whether it was found. */
  remove(item: T): boolean {
    const cmp = this.cmp;
    const pos = this.lowerBound((x) => cmp(x, item));
    const blk = this.blocks[pos.block];
    if (!blk || pos.index >= blk.length || cmp(blk[pos.index]!, item) !== 0) return false;
    blk.splice(pos.index, 1);
    this.count--;
    if (blk.length === 0) this.blocks.splice(pos.block, 1);
    return true;
  }

  /** Iterates forward from a cursor. The list must not be modified during iteration. */
  *from(c: Cursor): Generator<T> {
    for (let b = c.block, i = c.index; b < this.blocks.length; b++, i = 0) {
      const blk = this.blocks[b]!;
      for (; i < blk.length; i++) yield blk[i]!;
    }
  }

  /** Iterates backward starting just before the cursor. */
  *backFrom(c: Cursor): Generator<T> {
    let b = c.block;
    let i = c.index - 1;
    if (b >= this.blocks.length) {
      b = this.blocks.length - 1;
      i = (this.blocks[b]?.length ?? 0) - 1;
    }
    while (b >= 0) {
      const blk = this.blocks[b]!;
      for (; i >= 0; i--) yield blk[i]!;
      b--;
      if (b >= 0) i = this.blocks[b]!.length - 1;
    }
  }

  *[Symbol.iterator](): Generator<T> {
    yield* this.from({ block: 0, index: 0 });
  }

  endCursor(): Cursor {
    return { block: this.blocks.length, index: 0 };
  }

  clear(): void {
    this.blocks = [];
    this.count = 0;
  }
}
