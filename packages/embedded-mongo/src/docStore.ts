/**
 * Where a collection's documents live: as BSON bytes, not as JS object graphs, so that stored data
 * costs the V8 heap (and every full GC) almost nothing per document (see
 * docs/decisions/0007-engine-data-as-bytes.md). Documents are decoded on read, and the last
 * DECODED_CACHE decoded documents are kept, so those a workload is touching are decoded once.
 * Two stores share the bookkeeping below (StoreBase: id key -> slot, the decoded cache):
 * - DocStore (this file), memory mode: the bytes are packed into slabs in memory.
 * - FileDocStore (fileDocStore.ts), with a data directory: the bytes stay in the snapshot and journal
 *   files they were written to, and a slot only says where (file, offset, length).
 * Stored bytes are never changed in place, and decoded documents are never handed out for writing (the
 * engine installs a new version on every update), so the cache may share one object between readers.
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

/** A document's stored BSON bytes, if it is a stored version as read from or written to a store. */
export function storedBytesOf(doc: Doc): Uint8Array | undefined {
  return STORED.get(doc);
}

/** Decodes stored bytes and remembers them as the document's stored form (they must not change later). */
export function decodeStored(bytes: Uint8Array): Doc {
  const doc = decodeDoc(bytes);
  STORED.set(doc, bytes);
  return doc;
}

/** A typed array twice as long (or `min` long), with the same contents. */
export function grown<T extends Int32Array | Float64Array>(a: T, min = a.length * 2): T {
  const b = new (a.constructor as new (n: number) => T)(Math.max(min, a.length * 2));
  b.set(a);
  return b;
}

/**
 * The live documents of a collection at the moment a snapshot was decided, for writing it out later
 * while writes go on (stored bytes never change, so this is where each version is, not a copy).
 */
export interface CapturedDocs {
  readonly count: number;
  /** Documents from `from` on, in order, until about `maxBytes` of them: their bytes, valid for good. */
  read(from: number, maxBytes: number): Uint8Array[];
  /**
   * The snapshot holding them is in place as data file `file`, document i at `positions[i]`: each
   * document not rewritten since the capture is read from there from now on.
   */
  moved(file: number, positions: Float64Array): void;
}

/** Id keys to slots and the decoded cache: what both stores keep the same way. */
export abstract class StoreBase {
  /** id key -> slot, in insertion order (collection scans iterate it). */
  protected readonly slots = new Map<string, number>();
  private freeSlots: number[] = [];
  private nextSlot = 0;
  /** Most recently read or written documents, decoded (Map order = recency). */
  protected readonly decoded = new Map<string, Doc>();

  get size(): number {
    return this.slots.size;
  }

  has(id: string): boolean {
    return this.slots.has(id);
  }

  keys(): IterableIterator<string> {
    return this.slots.keys();
  }

  /** A document's stored BSON bytes; they stay valid whatever is written later. */
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
    const doc = decodeStored(this.bytesOf(slot));
    this.remember(id, doc);
    return doc;
  }

  /** Every document, decoded, in insertion order (the cache is left alone: a scan would flush it). */
  *values(): Generator<Doc> {
    for (const [, doc] of this.entries()) yield doc;
  }

  *entries(): Generator<[string, Doc]> {
    for (const [id, slot] of this.slots) yield [id, this.decoded.get(id) ?? decodeStored(this.bytesOf(slot))];
  }

  /** Every document's id key with only the fields `picker` reads, decoded from the stored bytes. */
  abstract picked(picker: { pick(bytes: Uint8Array, offset: number): Doc }): Iterable<[string, Doc]>;

  /** The live documents as they are now, for a snapshot. */
  abstract capture(): CapturedDocs;

  /** Stores a document's bytes under `id`; `doc` is its decoded form when the caller has it. */
  put(id: string, bytes: Uint8Array, doc?: Doc): void {
    const slot = this.claim(id);
    const stored = this.write(slot, bytes);
    if (doc) {
      STORED.set(doc, stored);
      this.remember(id, doc);
    }
    this.afterChange();
  }

  delete(id: string): boolean {
    const slot = this.slots.get(id);
    if (slot === undefined) return false;
    this.release(slot);
    this.slots.delete(id);
    this.freeSlots.push(slot);
    this.decoded.delete(id);
    this.afterChange();
    return true;
  }

  clear(): void {
    this.slots.clear();
    this.decoded.clear();
    this.freeSlots = [];
    this.nextSlot = 0;
  }

  protected abstract bytesOf(slot: number): Uint8Array;
  /** Lets go of a slot's current bytes (replaced or deleted). */
  protected abstract release(slot: number): void;
  /** Stores a slot's new bytes; returns them as stored (they stay valid whatever is written later). */
  protected abstract write(slot: number, bytes: Uint8Array): Uint8Array;
  /** Makes room for slots up to `slot`. */
  protected abstract ensureSlots(slot: number): void;
  protected afterChange(): void {}

  /** The slot of `id`, its current version released, or a new slot; the decoded version is forgotten. */
  protected claim(id: string): number {
    let slot = this.slots.get(id);
    if (slot !== undefined) this.release(slot);
    else {
      slot = this.freeSlots.pop();
      if (slot === undefined) this.ensureSlots((slot = this.nextSlot++));
      this.slots.set(id, slot);
    }
    this.decoded.delete(id);
    return slot;
  }

  private remember(id: string, doc: Doc): void {
    this.decoded.delete(id);
    this.decoded.set(id, doc);
    if (this.decoded.size > DECODED_CACHE) this.decoded.delete(this.decoded.keys().next().value!);
  }
}

/**
 * Memory mode: each document gets a slot; the slot says which slab and at what offset its bytes start.
 * A slab is a sequence of [slot: int32][BSON document] records, appended to. Replacing or deleting a
 * document leaves its old record dead in its slab; when the dead bytes outweigh the live ones, the
 * emptiest slabs are compacted: their live records (those whose slot still points at them) are copied
 * forward and the slab is released.
 */
export class DocStore extends StoreBase {
  private slotSlab = new Int32Array(1024);
  private slotOff = new Int32Array(1024);
  private slabs: Array<Buffer | undefined> = [];
  private slabLive: number[] = [];
  private slabUsed: number[] = [];
  private freeSlabs: number[] = [];
  /** The slab being appended to, or NO_SLAB. */
  private current = NO_SLAB;
  private liveBytes = 0;
  private totalBytes = 0;
  /** Dead bytes left after the last compaction pass. */
  private deadAfterPass = 0;

  /** Bytes held in slabs, and how many of them belong to current documents (tests, diagnostics). */
  get footprint(): { slabBytes: number; liveBytes: number } {
    return { slabBytes: this.totalBytes, liveBytes: this.liveBytes };
  }

  /**
   * A view into the document's slab. Slabs are only appended to and a released slab's memory lives
   * as long as a view of it, so the bytes stay valid whatever is written later.
   */
  protected bytesOf(slot: number): Uint8Array {
    const slab = this.slabs[this.slotSlab[slot]!]!;
    const at = this.slotOff[slot]!;
    return slab.subarray(at, at + slab.readInt32LE(at));
  }

  *picked(picker: { pick(bytes: Uint8Array, offset: number): Doc }): Generator<[string, Doc]> {
    for (const [id, slot] of this.slots) yield [id, picker.pick(this.slabs[this.slotSlab[slot]!]!, this.slotOff[slot]!)];
  }

  capture(): CapturedDocs {
    const docs = Array.from(this.slots.values(), (slot) => this.bytesOf(slot));
    return {
      count: docs.length,
      read: (from, maxBytes) => {
        let to = from;
        for (let bytes = 0; to < docs.length && bytes < maxBytes; to++) bytes += docs[to]!.length;
        return docs.slice(from, to);
      },
      moved: () => {}, // slabs stay where they are
    };
  }

  override clear(): void {
    super.clear();
    this.slabs = [];
    this.slabLive = [];
    this.slabUsed = [];
    this.freeSlabs = [];
    this.current = NO_SLAB;
    this.liveBytes = this.totalBytes = this.deadAfterPass = 0;
  }

  protected ensureSlots(slot: number): void {
    if (slot < this.slotSlab.length) return;
    this.slotSlab = grown(this.slotSlab);
    this.slotOff = grown(this.slotOff);
  }

  /** Marks a slot's current record dead (its slab keeps the bytes until compacted or released). */
  protected release(slot: number): void {
    const s = this.slotSlab[slot]!;
    if (s === NO_SLAB) return;
    const len = this.slabs[s]!.readInt32LE(this.slotOff[slot]!) + 4;
    this.slabLive[s]! -= len;
    this.liveBytes -= len;
    this.slotSlab[slot] = NO_SLAB; // before any compaction: the dead record is not copied forward
    if (this.slabLive[s] === 0 && s !== this.current) this.dropSlab(s);
  }

  protected write(slot: number, bytes: Uint8Array): Uint8Array {
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
    return slab.subarray(at + 4, at + need);
  }

  private openSlab(bytes: number): number {
    // allocUnsafeSlow: a slab of its own, never a slice of Node's shared pool.
    const slab = Buffer.allocUnsafeSlow(bytes);
    const s = this.freeSlabs.pop() ?? this.slabs.length;
    this.slabs[s] = slab;
    this.slabLive[s] = 0;
    this.slabUsed[s] = 0;
    this.totalBytes += bytes;
    return s;
  }

  private dropSlab(s: number): void {
    this.totalBytes -= this.slabs[s]!.length;
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
  protected override afterChange(): void {
    if (this.totalBytes < 4 * SLAB_BYTES || this.liveBytes * 4 > this.totalBytes * 3) return;
    // A pass that found little to move is not repeated until another slab's worth has died.
    if (this.totalBytes - this.liveBytes < this.deadAfterPass + SLAB_BYTES) return;
    for (let s = 0; s < this.slabs.length; s++) {
      const slab = this.slabs[s];
      if (!slab || s === this.current || this.slabLive[s]! * 5 > this.slabUsed[s]! * 3) continue;
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
}
