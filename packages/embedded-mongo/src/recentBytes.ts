/**
 * The bytes of a store's most recently synced writes, copied into one ring buffer of fixed size, so that
 * a document read moments after it was written (a payment's rail steps at +2 s and +5 s, a timer claimed
 * when due) is not read back from its data file (fileDocStore.ts). Copied, not kept by reference: the
 * bytes a write hands over are often views into larger buffers (an insert command's message, a pooled
 * 8 KiB slab), and keeping a view keeps all of it resident. One ring per store, allocated on first use;
 * no object per document (a slot's place is one number in a Map).
 *
 * Oldest first: the Map's insertion order is the order the ring was written in, so the entries a new write
 * overwrites are always at its front.
 */
/** Documents this large or larger are not kept (a packed place holds a length below 2^16). */
const MAX_KEPT = 65_536;

export class RecentBytes {
  private ring: Buffer | null = null;
  private head = 0;
  /** slot -> offset * MAX_KEPT + length. */
  private readonly places = new Map<number, number>();

  constructor(private readonly size: number) {}

  /** A copy of the slot's kept bytes, or undefined (a copy: the ring is overwritten later). */
  get(slot: number): Uint8Array | undefined {
    const packed = this.places.get(slot);
    if (packed === undefined) return undefined;
    const off = Math.floor(packed / MAX_KEPT);
    return Buffer.from(this.ring!.subarray(off, off + (packed % MAX_KEPT)));
  }

  keep(slot: number, bytes: Uint8Array): void {
    this.drop(slot);
    const len = bytes.length;
    if (len >= MAX_KEPT || len > this.size / 4) return;
    this.ring ??= Buffer.allocUnsafeSlow(this.size);
    if (this.head + len > this.size) {
      this.evictFrom(this.head, this.size); // the tail this lap skips
      this.head = 0;
    }
    this.evictFrom(this.head, this.head + len);
    this.ring.set(bytes, this.head);
    this.places.set(slot, this.head * MAX_KEPT + len);
    this.head += len;
  }

  drop(slot: number): void {
    this.places.delete(slot);
  }

  clear(): void {
    this.places.clear();
    this.head = 0;
  }

  /** Forgets the oldest entries while they start in [from, to): those of the last lap that the next write covers. */
  private evictFrom(from: number, to: number): void {
    for (const [slot, packed] of this.places) {
      const off = Math.floor(packed / MAX_KEPT);
      // An entry of this lap (below `from`) is newer than every one left of the last lap: stop there.
      if (off < from || off >= to) return;
      this.places.delete(slot);
    }
  }
}
