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
  /**
   * fences[b] is the last element of blocks[b]. The block searches compare against these, kept in
   * one array: under a write-heavy load the blocks are rarely in the CPU cache, and reaching a
   * block's last element through the block itself cost two more cache misses per step.
   */
  private fences: T[] = [];
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
      if (probe(this.fences[mid]!) < 0) lo = mid + 1;
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

  /**
   * Inserts an element. Writes are the hot path of every index, so this (and remove) searches with
   * `cmp` directly rather than through lowerBound: no probe closure and no cursor per call.
   */
  insert(item: T): void {
    const blocks = this.blocks;
    const fences = this.fences;
    const nb = blocks.length;
    this.count++;
    if (nb === 0) {
      blocks.push([item]);
      fences.push(item);
      return;
    }
    const cmp = this.cmp;
    // Keys that grow with time (seq, queued_at, stored_at, fire_at) mostly arrive in order: a new
    // entry that sorts after the last one is appended with one comparison instead of two binary
    // searches through blocks that are probably not in the CPU cache.
    if (cmp(fences[nb - 1]!, item) < 0) {
      const lastBlock = blocks[nb - 1]!;
      lastBlock.push(item);
      fences[nb - 1] = item;
      if (lastBlock.length > MAX_BLOCK) this.split(nb - 1);
      return;
    }
    // The list's last element is >= item, so both searches find a position inside the list (and
    // the block's fence stays what it is).
    const b = this.blockFor(item);
    const blk = blocks[b]!;
    blk.splice(this.indexIn(blk, item), 0, item);
    if (blk.length > MAX_BLOCK) this.split(b);
  }

  /** Removes the element equal (cmp === 0) to item; returns whether it was found. */
  remove(item: T): boolean {
    const blocks = this.blocks;
    const fences = this.fences;
    const nb = blocks.length;
    if (nb === 0) return false;
    if (this.cmp(fences[nb - 1]!, item) < 0) return false;
    const b = this.blockFor(item);
    const blk = blocks[b]!;
    const i = this.indexIn(blk, item);
    if (this.cmp(blk[i]!, item) !== 0) return false;
    blk.splice(i, 1);
    this.count--;
    if (blk.length === 0) {
      blocks.splice(b, 1);
      fences.splice(b, 1);
    } else if (i === blk.length) fences[b] = blk[i - 1]!;
    return true;
  }

  /** First block whose last element is >= item; the caller has checked that the list's last one is. */
  private blockFor(item: T): number {
    return this.indexIn(this.fences, item);
  }

  /** Index of the first element of `sorted` that is >= item; its last element is. */
  private indexIn(sorted: T[], item: T): number {
    const cmp = this.cmp;
    let lo = 0;
    let hi = sorted.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cmp(sorted[mid]!, item) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private split(b: number): void {
    const blk = this.blocks[b]!;
    const tail = blk.splice(MAX_BLOCK >>> 1);
    this.blocks.splice(b + 1, 0, tail);
    this.fences.splice(b, 0, blk[blk.length - 1]!);
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

  /** Replaces the contents with `sorted` (already in `cmp` order): blocks cut from it, no searches. */
  fill(sorted: T[]): void {
    this.clear();
    const half = MAX_BLOCK >>> 1;
    for (let i = 0; i < sorted.length; i += half) {
      const blk = sorted.slice(i, i + half);
      this.blocks.push(blk);
      this.fences.push(blk[blk.length - 1]!);
    }
    this.count = sorted.length;
  }

  clear(): void {
    this.blocks = [];
    this.fences = [];
    this.count = 0;
  }
}
