/**
 * Where a collection's documents live: as BSON bytes packed into large slabs, not as JS object
 * graphs. A stored payment as objects cost the V8 heap about 8 KiB (every string, Date and nested
 * object its own allocation, and the garbage collector walking all of them on every full GC); as
 * bytes it costs its BSON size plus a few words. Documents are decoded on read, and the last
 * DECODED_CACHE decoded documents are kept, so the documents a workload is touching (a payment
 * moving through its states) are decoded once.
 *
 * Layout: each document gets a slot (a small integer, the value in `slots`); the slot says which slab
 * and at what offset its bytes start. A slab is a sequence of [slot: int32][BSON document] records,
 * appended to. Replacing or deleting a document leaves its old record dead in its slab; when the dead
 * bytes outweigh the live ones, the emptiest slabs are compacted: their live records (those whose
 * slot still points at them) are copied forward and the slab is released.
 *
 * Stored bytes are never changed in place, and decoded documents are never handed out for writing
 * (the engine installs a new version on every update), so the cache can share one object between
 * readers exactly as the map of objects did before.
 */
import { deserialize, serialize } from 'bson';
import type { Doc } from './values';

/** Same options as the wire protocol and the journal: a stored document reads back as a client's would. */
const BSON_OPTS = { promoteLongs: true, promoteValues: true, promoteBuffers: false } as const;
const SLAB_BYTES = 256 * 1024;
/** Documents larger than this get a slab of their own. */
const LARGE_DOC = 64 * 1024;
/** Enough for read-after-write of the documents a command touches; larger only churned the old generation. */
const DECODED_CACHE = 64;
const NO_SLAB = -1;

export function encodeDoc(doc: Doc): Uint8Array {
  return serialize(doc);
}

export function decodeDoc(bytes: Uint8Array): Doc {
  return deserialize(bytes, BSON_OPTS);
}

/**
 * The stored bytes of documents this module decoded or was given with their bytes: a reply can copy
 * them instead of encoding the object again (wire.ts). Weak, so it holds neither documents nor bytes.
 */
const STORED = new WeakMap<Doc, Uint8Array>();

/** A document's stored BSON bytes, if it is a stored version as read from or written to a DocStore. */
export function storedBytesOf(doc: Doc): Uint8Array | undefined {
  return STORED.get(doc);
}

export class DocStore {
  /** id key -> slot, in insertion order (collection scans iterate it). */
  private readonly slots = new Map<string, number>();
  private slotSlab = new Int32Array(1024);
  private slotOff = new Int32Array(1024);
  private freeSlots: number[] = [];
  private nextSlot = 0;
  private slabs: Array<Buffer | undefined> = [];
  private slabLive: number[] = [];
  /** Bytes appended (own slabs) or adopted (external slabs). */
  private slabUsed: number[] = [];
  /**
   * External slabs are files read at start-up (snapshot, journals): their documents are adopted
   * where they lie instead of being copied, and the records around them are not [slot][document].
   */
  private external: boolean[] = [];
  /** While loading: the slab of each file buffer documents were adopted from. */
  private adopted = new Map<ArrayBufferLike, number>();
  private freeSlabs: number[] = [];
  /** The slab being appended to, or NO_SLAB. */
  private current = NO_SLAB;
  private liveBytes = 0;
  private totalBytes = 0;
  /** Dead bytes left after the last compaction pass. */
  private deadAfterPass = 0;
  /** Most recently read or written documents, decoded (Map order = recency). */
  private readonly decoded = new Map<string, Doc>();

  get size(): number {
    return this.slots.size;
  }

  /** Bytes held in slabs, and how many of them belong to current documents (tests, diagnostics). */
  get footprint(): { slabBytes: number; liveBytes: number } {
    return { slabBytes: this.totalBytes, liveBytes: this.liveBytes };
  }

  has(id: string): boolean {
    return this.slots.has(id);
  }

  keys(): IterableIterator<string> {
    return this.slots.keys();
  }

  /**
   * A document's stored BSON bytes: a view into its slab. Slabs are only appended to and a released
   * slab's memory lives as long as a view of it, so the bytes stay valid whatever is written later.
   */
  stored(id: string): Uint8Array | undefined {
    const slot = this.slots.get(id);
    return slot === undefined ? undefined : this.bytesOf(slot);
  }

  get(id: string): Doc | undefined {
    const hit = this.decoded.get(id);
    if (hit !== undefined) {
      this.decoded.delete(id);
      this.decoded.set(id, hit);
      return hit;
    }
    const slot = this.slots.get(id);
    if (slot === undefined) return undefined;
    const doc = this.decodeSlot(slot);
    this.remember(id, doc);
    return doc;
  }

  /** Every document, decoded, in insertion order (the cache is left alone: a scan would flush it). */
  *values(): Generator<Doc> {
    for (const [id, slot] of this.slots) yield this.decoded.get(id) ?? this.decodeSlot(slot);
  }

  *entries(): Generator<[string, Doc]> {
    for (const [id, slot] of this.slots) yield [id, this.decoded.get(id) ?? this.decodeSlot(slot)];
  }

  private bytesOf(slot: number): Uint8Array {
    const slab = this.slabs[this.slotSlab[slot]!]!;
    const at = this.slotOff[slot]!;
    return slab.subarray(at, at + slab.readInt32LE(at));
  }

  private decodeSlot(slot: number): Doc {
    const bytes = this.bytesOf(slot);
    const doc = decodeDoc(bytes);
    STORED.set(doc, bytes);
    return doc;
  }

  /** Every document's id key with only the fields `picker` reads, decoded from the stored bytes. */
  *picked(picker: { pick(bytes: Uint8Array, offset: number): Doc }): Generator<[string, Doc]> {
    for (const [id, slot] of this.slots) yield [id, picker.pick(this.slabs[this.slotSlab[slot]!]!, this.slotOff[slot]!)];
  }

  /** Stores a document's bytes under `id`; `doc` is its decoded form when the caller has it. */
  put(id: string, bytes: Uint8Array, doc?: Doc): void {
    let slot = this.slots.get(id);
    if (slot !== undefined) this.release(slot);
    else {
      slot = this.freeSlots.pop() ?? this.newSlot();
      this.slots.set(id, slot);
    }
    this.write(slot, bytes);
    if (doc) {
      STORED.set(doc, this.bytesOf(slot));
      this.remember(id, doc);
    } else this.decoded.delete(id);
    this.maybeCompact();
  }

  /**
   * Start-up: stores a document whose bytes lie in a file buffer read by the journal, without a copy.
   * The buffer stays in memory while any of its documents is current; compaction moves them out once
   * most of them have been replaced.
   */
  adopt(id: string, bytes: Uint8Array): void {
    let s = this.adopted.get(bytes.buffer);
    if (s === undefined) {
      s = this.freeSlabs.pop() ?? this.slabs.length;
      this.slabs[s] = Buffer.from(bytes.buffer, 0, bytes.buffer.byteLength);
      this.slabLive[s] = 0;
      this.slabUsed[s] = 0;
      this.external[s] = true;
      this.adopted.set(bytes.buffer, s);
    }
    let slot = this.slots.get(id);
    if (slot !== undefined) this.release(slot);
    else {
      slot = this.freeSlots.pop() ?? this.newSlot();
      this.slots.set(id, slot);
    }
    const len = bytes.length;
    this.slabUsed[s]! += len;
    this.slabLive[s]! += len;
    this.liveBytes += len;
    this.totalBytes += len;
    this.slotSlab[slot] = s;
    this.slotOff[slot] = bytes.byteOffset;
    this.decoded.delete(id);
  }

  /** Start-up is over: forget which file buffers were adopted (their slabs stay). */
  endLoad(): void {
    this.adopted.clear();
  }

  delete(id: string): boolean {
    const slot = this.slots.get(id);
    if (slot === undefined) return false;
    this.release(slot);
    this.slotSlab[slot] = NO_SLAB;
    this.slots.delete(id);
    this.freeSlots.push(slot);
    this.decoded.delete(id);
    this.maybeCompact();
    return true;
  }

  clear(): void {
    this.slots.clear();
    this.decoded.clear();
    this.slabs = [];
    this.slabLive = [];
    this.slabUsed = [];
    this.external = [];
    this.adopted.clear();
    this.freeSlabs = [];
    this.freeSlots = [];
    this.nextSlot = 0;
    this.current = NO_SLAB;
    this.liveBytes = this.totalBytes = this.deadAfterPass = 0;
  }

  private remember(id: string, doc: Doc): void {
    this.decoded.delete(id);
    this.decoded.set(id, doc);
    if (this.decoded.size > DECODED_CACHE) this.decoded.delete(this.decoded.keys().next().value!);
  }

  private newSlot(): number {
    const slot = this.nextSlot++;
    if (slot >= this.slotSlab.length) {
      const grow = (a: Int32Array) => {
        const b = new Int32Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.slotSlab = grow(this.slotSlab);
      this.slotOff = grow(this.slotOff);
    }
    return slot;
  }

  /** Marks a slot's current record dead (its slab keeps the bytes until compacted or released). */
  private release(slot: number): void {
    const s = this.slotSlab[slot]!;
    if (s === NO_SLAB) return;
    const len = this.slabs[s]!.readInt32LE(this.slotOff[slot]!) + (this.external[s] ? 0 : 4);
    this.slabLive[s]! -= len;
    this.liveBytes -= len;
    // An adopted file buffer may still receive documents while loading.
    if (this.slabLive[s] === 0 && s !== this.current && !(this.external[s] && this.adopted.size > 0)) this.dropSlab(s);
  }

  private write(slot: number, bytes: Uint8Array): void {
    const need = bytes.length + 4;
    let s = this.current;
    if (need > LARGE_DOC) s = this.openSlab(need);
    else if (s === NO_SLAB || this.slabUsed[s]! + need > this.slabs[s]!.length) s = this.current = this.openSlab(SLAB_BYTES);
    const slab = this.slabs[s]!;
    const at = this.slabUsed[s]!;
    slab.writeInt32LE(slot, at);
    slab.set(bytes, at + 4);
    this.slabUsed[s] = at + need;
    this.slabLive[s]! += need;
    this.liveBytes += need;
    this.slotSlab[slot] = s;
    this.slotOff[slot] = at + 4;
  }

  private openSlab(bytes: number): number {
    // allocUnsafeSlow: a slab of its own, never a slice of Node's shared pool.
    const slab = Buffer.allocUnsafeSlow(bytes);
    const s = this.freeSlabs.pop() ?? this.slabs.length;
    this.slabs[s] = slab;
    this.slabLive[s] = 0;
    this.slabUsed[s] = 0;
    this.external[s] = false;
    this.totalBytes += bytes;
    return s;
  }

  private dropSlab(s: number): void {
    this.totalBytes -= this.external[s] ? this.slabUsed[s]! : this.slabs[s]!.length;
    if (this.external[s]) for (const [buf, slab] of this.adopted) if (slab === s) this.adopted.delete(buf);
    this.slabs[s] = undefined;
    this.slabLive[s] = 0;
    this.slabUsed[s] = 0;
    this.freeSlabs.push(s);
    if (this.current === s) this.current = NO_SLAB;
    this.deadAfterPass = Math.min(this.deadAfterPass, this.totalBytes - this.liveBytes);
  }

  /**
   * When more than a quarter of the slab bytes are dead (and there is more than a few slabs' worth),
   * moves the live records of every slab that is less than 60 % live into the current slab. Payments
   * are rewritten a few times early in their life and then rarely: most slabs end up either nearly
   * all dead (released without a copy) or nearly all live, so compaction copies little.
   */
  private maybeCompact(): void {
    if (this.adopted.size > 0) return; // loading: file buffers are still being adopted
    if (this.totalBytes < 4 * SLAB_BYTES || this.liveBytes * 4 > this.totalBytes * 3) return;
    // A pass that found little to move is not repeated until another slab's worth has died.
    if (this.totalBytes - this.liveBytes < this.deadAfterPass + SLAB_BYTES) return;
    for (let s = 0; s < this.slabs.length; s++) {
      const slab = this.slabs[s];
      if (!slab || s === this.current || this.slabLive[s]! * 5 > this.slabUsed[s]! * 3) continue;
      if (this.external[s]) {
        this.moveAdopted(s);
        continue;
      }
      const used = this.slabUsed[s]!;
      let at = 0;
      while (at < used) {
        const slot = slab.readInt32LE(at);
        const len = slab.readInt32LE(at + 4);
        if (this.slotSlab[slot] === s && this.slotOff[slot] === at + 4) {
          const bytes = slab.subarray(at + 4, at + 4 + len);
          this.slabLive[s]! -= len + 4;
          this.liveBytes -= len + 4;
          this.write(slot, bytes);
        }
        at += len + 4;
      }
      this.dropSlab(s);
    }
    this.deadAfterPass = this.totalBytes - this.liveBytes;
  }

  /** Copies the current documents of an external slab into own slabs and lets the file buffer go. */
  private moveAdopted(s: number): void {
    const slab = this.slabs[s]!;
    for (let slot = 0; slot < this.nextSlot; slot++) {
      if (this.slotSlab[slot] !== s) continue;
      const at = this.slotOff[slot]!;
      const len = slab.readInt32LE(at);
      this.slabLive[s]! -= len;
      this.liveBytes -= len;
      this.write(slot, slab.subarray(at, at + len));
    }
    this.dropSlab(s);
  }
}
