/**
 * A collection's documents with a data directory: their bytes stay in the data files, not in memory.
 * Per slot the store keeps only where the current version lies (data file number, offset, length, in
 * typed arrays: no object per document) and reads it back with a positional read when it is needed
 * (docFiles.ts); the decoded cache of StoreBase keeps the documents in use decoded.
 *
 * A write's bytes are kept in memory only until the journal has written and synced them: the
 * journal then reports where they landed (`landed`) and the slot points there. A snapshot re-points
 * every document it holds that was not rewritten meanwhile (`capture().moved`) before the older
 * files are deleted. Start-up (`locate`) points each document at its bytes in the snapshot or journal
 * it was read from, without keeping them.
 */
import type { DocFiles, DocPlaces } from './docFiles';
import { StoreBase, decodeStored, grown, type CapturedDocs } from './docStore';
import { RecentBytes } from './recentBytes';
import type { Doc } from './values';

/** File number of a slot whose bytes are in `mem` (written, not yet synced to the journal). */
const IN_MEMORY = -1;
/** File number of a free slot. */
const NOWHERE = -2;
/** Documents read per batch by a scan: small first (a scan is often stopped after a few), then larger. */
const FIRST_BATCH = 16;
const MAX_BATCH = 1024;
/** Documents per batch of an index build (only a few fields of each are decoded). */
const PICK_BATCH = 1024;
/**
 * Bytes of recently synced writes kept per store (recentBytes.ts): under bench:rail journaled, reading
 * documents written moments before back from their files (a syscall and a buffer each) was 9 % of the
 * engine thread. A constant per collection, allocated on its first write, not a cost per document.
 */
const RECENT_BYTES = 4 * 1024 * 1024;

export class FileDocStore extends StoreBase {
  private places: DocPlaces = { file: new Int32Array(1024).fill(NOWHERE), pos: new Float64Array(1024), len: new Int32Array(1024) };
  /** The bytes of the slots written since their journal append was synced. */
  private readonly mem = new Map<number, Uint8Array>();
  /** Bytes written here -> their slot, until the journal says where it wrote them. Weak: bytes never journaled (an aborted transaction's) just go. */
  private readonly unflushed = new WeakMap<Uint8Array, number>();
  /** Copies of the most recently synced writes' bytes, by slot. */
  private readonly recent = new RecentBytes(RECENT_BYTES);

  constructor(private readonly files: DocFiles) {
    super();
  }

  /** Bytes of documents held in memory, waiting for their journal append (tests, diagnostics). */
  get memoryBytes(): number {
    let n = 0;
    for (const b of this.mem.values()) n += b.length;
    return n;
  }

  /** Start-up: the current version of document `id` is `len` bytes at `pos` of data file `file`. */
  locate(id: string, file: number, pos: number, len: number): void {
    this.point(this.claim(id), file, pos, len);
  }

  /** The journal has written and synced `bytes` (written here by `put`) at `pos` of data file `file`. */
  landed(bytes: Uint8Array, file: number, pos: number): void {
    const slot = this.unflushed.get(bytes);
    if (slot === undefined) return;
    this.unflushed.delete(bytes);
    // Rewritten or deleted before its append was synced: the slot holds other bytes, or none.
    if (this.places.file[slot] !== IN_MEMORY || this.mem.get(slot) !== bytes) return;
    this.mem.delete(slot);
    this.point(slot, file, pos, bytes.length);
    this.recent.keep(slot, bytes);
  }

  protected bytesOf(slot: number): Uint8Array {
    const file = this.places.file[slot]!;
    if (file === IN_MEMORY) return this.mem.get(slot)!;
    return this.recent.get(slot) ?? this.files.read(file, this.places.pos[slot]!, this.places.len[slot]!);
  }

  protected write(slot: number, bytes: Uint8Array): Uint8Array {
    this.places.file[slot] = IN_MEMORY;
    this.mem.set(slot, bytes);
    this.unflushed.set(bytes, slot);
    return bytes;
  }

  protected release(slot: number): void {
    if (this.places.file[slot] === IN_MEMORY) this.mem.delete(slot);
    // The slot's next version (or none) replaces these bytes; a snapshot's re-pointing keeps them.
    this.recent.drop(slot);
    this.places.file[slot] = NOWHERE;
  }

  protected ensureSlots(slot: number): void {
    if (slot < this.places.file.length) return;
    const file = grown(this.places.file);
    file.fill(NOWHERE, this.places.file.length);
    this.places = { file, pos: grown(this.places.pos), len: grown(this.places.len) };
  }

  private point(slot: number, file: number, pos: number, len: number): void {
    this.places.file[slot] = file;
    this.places.pos[slot] = pos;
    this.places.len[slot] = len;
  }

  override clear(): void {
    super.clear();
    this.mem.clear();
    this.recent.clear();
    this.places.file.fill(NOWHERE);
  }

  /**
   * In insertion order, read in batches: each batch's documents are read in file order, with one
   * pread per stretch of file (a whole-collection scan reads the files about once, not document by
   * document). A document rewritten or deleted while the scan was paused is read again, or skipped.
   */
  override *entries(): Generator<[string, Doc]> {
    const it = this.slots.entries();
    for (let size = FIRST_BATCH; ; size = Math.min(size * 2, MAX_BATCH)) {
      const batch = take(it, size);
      if (batch.length === 0) return;
      // slot -> the document as read, and from where (to tell whether it was rewritten since).
      const read = new Map<number, [Doc, number, number]>();
      const inFiles = batch.filter(([id, slot]) => !this.decoded.has(id) && this.places.file[slot]! >= 0).map(([, slot]) => slot);
      this.files.scan(this.places, inFiles, (slot, buf, off) => {
        const doc = decodeStored(Buffer.from(buf.subarray(off, off + this.places.len[slot]!)));
        read.set(slot, [doc, this.places.file[slot]!, this.places.pos[slot]!]);
      });
      for (const [id, slot] of batch) {
        if (this.slots.get(id) !== slot || this.places.file[slot] === NOWHERE) continue; // deleted meanwhile
        const r = read.get(slot);
        const unchanged = r !== undefined && this.places.file[slot] === r[1] && this.places.pos[slot] === r[2];
        yield [id, this.decoded.get(id) ?? (unchanged ? r[0] : decodeStored(this.bytesOf(slot)))];
      }
    }
  }

  /** Index builds: in file order within batches of PICK_BATCH, the fields picked where the bytes were read. */
  *picked(picker: { pick(bytes: Uint8Array, offset: number): Doc }): Generator<[string, Doc]> {
    /** slot -> its index in the batch (a typed array: a Map per batch cost as much as the reads). */
    let where = new Int32Array(this.places.file.length);
    let ids: string[] = [];
    let order: number[] = [];
    const batch = (): Array<[string, Doc]> => {
      const out = new Array<[string, Doc]>(ids.length);
      if (this.places.file.length > where.length) where = grown(where, this.places.file.length); // inserts meanwhile
      order.forEach((slot, k) => (where[slot] = k));
      this.files.scan(this.places, order, (slot, buf, off) => {
        const k = where[slot]!;
        out[k] = [ids[k]!, picker.pick(buf, off)];
      });
      ids = [];
      order = [];
      return out;
    };
    for (const [id, slot] of this.slots) {
      if (this.places.file[slot] === IN_MEMORY) yield [id, picker.pick(this.mem.get(slot)!, 0)];
      else {
        ids.push(id);
        order.push(slot);
        if (order.length === PICK_BATCH) yield* batch();
      }
    }
    if (order.length > 0) yield* batch();
  }

  /**
   * Start-up's index builds: every document's bytes (`buf` from `offset`, valid during the call),
   * read as `picked` reads them but without decoding anything.
   */
  visitBytes(visit: (id: string, buf: Buffer, offset: number) => void): void {
    let ids: string[] = [];
    let order: number[] = [];
    const where = new Int32Array(this.places.file.length);
    const batch = (): void => {
      order.forEach((slot, k) => (where[slot] = k));
      this.files.scan(this.places, order, (slot, buf, off) => visit(ids[where[slot]!]!, buf, off));
      ids = [];
      order = [];
    };
    for (const [id, slot] of this.slots) {
      if (this.places.file[slot] === IN_MEMORY) {
        const bytes = this.mem.get(slot)!;
        visit(id, Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), 0);
      } else {
        ids.push(id);
        order.push(slot);
        if (order.length === PICK_BATCH) batch();
      }
    }
    if (order.length > 0) batch();
  }

  capture(): CapturedDocs {
    const count = this.slots.size;
    const slotOf = new Int32Array(count);
    const at: DocPlaces = { file: new Int32Array(count), pos: new Float64Array(count), len: new Int32Array(count) };
    const mem = new Map<number, Uint8Array>();
    let i = 0;
    for (const slot of this.slots.values()) {
      slotOf[i] = slot;
      at.file[i] = this.places.file[slot]!;
      at.pos[i] = this.places.pos[slot]!;
      at.len[i] = this.places.len[slot]!;
      const bytes = this.mem.get(slot);
      if (at.file[i] === IN_MEMORY && bytes) {
        mem.set(i, bytes);
        at.len[i] = bytes.length;
      }
      i++;
    }
    return {
      count,
      read: (from, maxBytes) => {
        let to = from;
        for (let bytes = 0; to < count && bytes < maxBytes; to++) bytes += at.len[to]!;
        const out = new Array<Uint8Array>(to - from);
        const order: number[] = [];
        let inFiles = 0;
        for (let j = from; j < to; j++) {
          const bytes = mem.get(j);
          if (bytes) out[j - from] = bytes;
          else {
            order.push(j);
            inFiles += at.len[j]!;
          }
        }
        // The batch's documents copied into one buffer, not one allocation each: a snapshot passes every
        // stored document through here, and thousands of small buffers freed only by the next full GC
        // left malloc holding that much more memory after each snapshot (issue 13).
        const copies = Buffer.allocUnsafeSlow(inFiles);
        let filled = 0;
        this.files.scan(at, order, (j, buf, off) => {
          const len = at.len[j]!;
          buf.copy(copies, filled, off, off + len);
          out[j - from] = copies.subarray(filled, (filled += len));
        });
        return out;
      },
      moved: (file, positions) => {
        for (let j = 0; j < count; j++) {
          const slot = slotOf[j]!;
          const bytes = mem.get(j);
          const unchanged = bytes
            ? this.places.file[slot] === IN_MEMORY && this.mem.get(slot) === bytes
            : this.places.file[slot] === at.file[j] && this.places.pos[slot] === at.pos[j];
          if (!unchanged) continue;
          if (bytes) this.mem.delete(slot);
          this.point(slot, file, positions[j]!, at.len[j]!);
        }
      },
    };
  }
}

/** The next `n` entries of an iterator. */
function take<T>(it: Iterator<T>, n: number): T[] {
  const out: T[] = [];
  for (let r = it.next(); ; r = it.next()) {
    if (r.done) break;
    out.push(r.value);
    if (out.length === n) break;
  }
  return out;
}
