/**
 * Durability: a write-ahead journal of physical redo records plus periodic snapshots.
 *
 * - Every acknowledged write is appended to `journal-<gen>.log` and fdatasync'ed first. Records
 *   arriving while a flush is in progress are batched into the next append+fsync (group commit).
 * - Record framing: [u32 length][u32 crc32][BSON { ops: [...] }]. A torn or corrupt tail of the
 *   last journal file (crash mid-append) is detected on start-up, ignored and truncated away; damage
 *   in any earlier file stops start-up (see corruptJournalMessage) unless `repairTruncate`.
 * - When the journal grows past `compactBytes`, the next generation's journal is opened, the
 *   in-memory state is captured (stored documents are immutable, so this is just references)
 *   and written to `snapshot.tmp`, fsync'ed and renamed to `snapshot.bson`; older journals are
 *   then deleted. Start-up = snapshot + journals with gen >= the snapshot's `journalGen`.
 * - The files are also where stored documents are read from (docFiles.ts, fileDocStore.ts): an
 *   append reports, once synced, where each document landed (`landed`); a snapshot re-points the
 *   documents it holds to itself once renamed into place, before the older files are deleted.
 *   Start-up streams each file through one reused buffer (LOAD_CHUNK) and keeps no document bytes.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import { Binary, deserialize, serialize } from 'bson';
import { readPutOp, recordOps } from './bsonRaw';
import { dataDirError } from './dataDirError';
import type { DocFiles } from './docFiles';
import type { CapturedDocs } from './docStore';
import type { IndexSpec } from './indexes';
import { makePrivateDir, PRIVATE_FILE_MODE } from './privateDir';
import type { Doc } from './values';

export type JournalOp =
  /** `doc`: the stored document's BSON bytes, written and read back without a decode. */
  | { o: 'put'; db: string; c: string; doc: Uint8Array }
  | { o: 'del'; db: string; c: string; id: unknown }
  | { o: 'cc'; db: string; c: string; opts: Doc; uuid?: Binary }
  | { o: 'dc'; db: string; c: string }
  | { o: 'ci'; db: string; c: string; spec: IndexSpec }
  | { o: 'di'; db: string; c: string; name: string }
  | { o: 'dd'; db: string };

export interface Journal {
  append(ops: JournalOp[]): Promise<void> | undefined;
  close(): Promise<void>;
}

/** Memory mode: nothing to persist, writes are acknowledged at once. */
export class MemoryJournal implements Journal {
  append(): undefined {
    return undefined;
  }
  async close(): Promise<void> {}
}

const HEADER = 8;
const SNAPSHOT = 'snapshot.bson';
const SNAPSHOT_TMP = 'snapshot.tmp';
const JOURNAL_RE = /^journal-(\d+)\.log$/;
const OP_OPTS = { promoteLongs: true, promoteValues: true, promoteBuffers: false } as const;
const RECORD_OPTS = { promoteLongs: true, promoteValues: true, promoteBuffers: false, fieldsAsRaw: { ops: true } } as const;
/** Start-up reads files through a buffer this large, reused from chunk to chunk (grown for a larger record). */
const LOAD_CHUNK = 4 * 1024 * 1024;
/**
 * After a write refused for lack of space, every write is refused for this long before the journal
 * tries again. A `{ w: 1 }` write is answered before it is journaled, and taken back if its record is
 * refused; a client that heard "applied" (an idempotency claim, a counter reservation) goes on with
 * writes that assume it. Without a pause, space freed a moment later would journal those follow-ups
 * without the write they rest on; with it, a follow-up sent within the pause is refused as well, and a
 * `{ w: 1 }` write within the pause is refused at once (Engine.finish), not acknowledged.
 */
const QUARANTINE_MS = 1_000;
/** After a failed snapshot (a full disk), the next is tried this much later. */
const COMPACTION_RETRY_MS = 30_000;
/** A snapshot record holds about this many bytes of documents. */
const SNAPSHOT_RECORD = 512 * 1024;

const crc32: (data: Uint8Array) => number =
  (zlib as unknown as { crc32?: (d: Uint8Array) => number }).crc32 ?? crc32Fallback;

let crcTable: Uint32Array | undefined;
function crc32Fallback(data: Uint8Array): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (let i = 0; i < data.length; i++) crc = crcTable[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function frame(payload: Doc): Buffer {
  return frameBody(serialize(payload));
}

/**
 * A record `{ ops: [...] }`; put ops carry their document's stored bytes, copied in as they are.
 * `docAt[i]`: where op i's document lies in the record (a put's), -1 if it is not a put.
 * Written straight into the one buffer it returns (a put's `{ o, db, c }` serialized once per run of
 * puts to one collection), not op by op and then copied twice more (array, record, frame): a snapshot
 * passes every document through here, and the intermediate buffers, freed only by a later GC, left
 * malloc holding that much more memory (issue 13). The bytes are those of the layout bsonRaw.ts reads.
 */
function frameOps(ops: JournalOp[]): { buf: Buffer; docAt: number[] } {
  const heads = new Array<Uint8Array>(ops.length);
  let last: { db: string; c: string; head: Uint8Array } | undefined;
  // int32, 0x04 "ops\0", the array's int32, the array's closing 0x00, the record's closing 0x00.
  let body = 4 + 5 + 4 + 1 + 1;
  ops.forEach((op, i) => {
    body += 2 + String(i).length; // 0x03 "<i>\0"
    if (op.o !== 'put') {
      heads[i] = serialize(op);
      body += heads[i]!.length;
      return;
    }
    if (last?.db !== op.db || last.c !== op.c) last = { db: op.db, c: op.c, head: serialize({ o: op.o, db: op.db, c: op.c }) };
    const head = (heads[i] = last.head);
    body += head.length - 1 + PUT_DOC.length + op.doc.length + 1; // its fields, 0x03 "doc\0", the document, 0x00
  });
  const buf = Buffer.allocUnsafe(HEADER + body);
  let w = HEADER;
  buf.writeInt32LE(body, w);
  w += 4;
  w += buf.write('\x04ops\0', w, 'latin1');
  const arrayStart = w;
  w += 4;
  const docAt = ops.map((op, i) => {
    w += buf.write(`\x03${i}\0`, w, 'latin1');
    const head = heads[i]!;
    if (op.o !== 'put') {
      buf.set(head, w);
      w += head.length;
      return -1;
    }
    const opStart = w;
    buf.set(head.subarray(0, head.length - 1), w);
    w += head.length - 1;
    buf.set(PUT_DOC, w);
    w += PUT_DOC.length;
    const at = w;
    buf.set(op.doc, w);
    w += op.doc.length;
    buf[w++] = 0;
    buf.writeInt32LE(w - opStart, opStart);
    return at;
  });
  buf[w++] = 0;
  buf.writeInt32LE(w - arrayStart, arrayStart);
  buf[w++] = 0;
  buf.writeUInt32LE(body, 0);
  buf.writeUInt32LE(crc32(buf.subarray(HEADER)), 4);
  return { buf, docAt };
}

/** A put op's document element: type 0x03 and name "doc". */
const PUT_DOC = Buffer.from('\x03doc\0', 'latin1');

/** A journal op; a put's document stays bytes (installed as stored, never decoded at start-up). */
/** The op stored as a document at `offset` of `raw`. */
function decodeOp(raw: Buffer, offset = 0): JournalOp {
  const put = readPutOp(raw, offset);
  if (put) return put;
  const op = deserialize(raw.subarray(offset, offset + raw.readUInt32LE(offset)), OP_OPTS) as JournalOp;
  if (op.o === 'put') throw new Error('journal put without a document');
  return op;
}

function frameBody(body: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(HEADER + body.length);
  out.writeUInt32LE(body.length, 0);
  out.writeUInt32LE(crc32(body), 4);
  out.set(body, HEADER);
  return out;
}

/**
 * A record as streamRecords hands it over (one object, reused: valid during the call). An ops record
 * `{ ops: [op, ...] }` comes as `body` and its ops' offsets in it (`ops`); any other record (a
 * snapshot's meta) decoded, in `fields`, its ops (if any) as bytes.
 */
interface ReadRecord {
  body: Buffer;
  ops: number[];
  fields: Doc | undefined;
}

/**
 * Streams the framed records of data file `n` (`size` bytes) through `chunk`, a buffer reused from
 * read to read (fresh memory is expensive to touch, and nothing of a record is kept: a put's document
 * is located, not copied). Calls `onRecord` with each valid record's payload, whose ops stay bytes
 * (views into the chunk, valid during the call), and the file offset of the chunk's first byte.
 * Returns the byte offset where valid data ends and the chunk (grown if a record needed it).
 */
function streamRecords(
  files: DocFiles,
  n: number,
  size: number,
  chunk: Buffer,
  onRecord: (record: ReadRecord, chunk: Buffer, chunkPos: number) => void,
): { validEnd: number; chunk: Buffer } {
  const record: ReadRecord = { body: chunk, ops: [], fields: undefined };
  let chunkPos = 0; // file offset of chunk[0]
  let filled = 0;
  let off = 0; // next record, in the chunk
  for (;;) {
    if (off + HEADER > filled || off + HEADER + chunk.readUInt32LE(off) > filled) {
      // Move the partial record to the front and read more behind it.
      const need = off + HEADER <= filled ? HEADER + chunk.readUInt32LE(off) : HEADER;
      if (chunkPos + off + need > size) break; // the file ends inside this record: a torn tail
      if (need > chunk.length) {
        const bigger = Buffer.allocUnsafeSlow(need);
        chunk.copy(bigger, 0, off, filled);
        chunk = bigger;
      } else chunk.copyWithin(0, off, filled);
      chunkPos += off;
      filled -= off;
      off = 0;
      const len = Math.min(chunk.length - filled, size - chunkPos - filled);
      files.readInto(n, chunk, filled, len, chunkPos + filled);
      filled += len;
      continue;
    }
    const len = chunk.readUInt32LE(off);
    if (len < 5) break;
    const body = chunk.subarray(off + HEADER, off + HEADER + len);
    if (crc32(body) !== chunk.readUInt32LE(off + 4)) break;
    // Ops stay bytes here: a put's document is located, never decoded at start-up. An ops record is
    // not decoded at all (recordOps checks its layout); any other one is, ops kept as bytes.
    record.body = body;
    record.fields = undefined;
    if (!recordOps(body, record.ops)) {
      try {
        record.fields = deserialize(body, RECORD_OPTS);
      } catch {
        break;
      }
    }
    onRecord(record, chunk, chunkPos);
    off += HEADER + len;
  }
  return { validEnd: chunkPos + off, chunk };
}

/**
 * Why start-up stops at a corrupt journal file that is not the last. Each file is complete and
 * fdatasync'ed before the next one is opened, so damage there is not a crash mid-append: it is the
 * disk, a copy or a hand, and what follows it was acknowledged. Dropping it silently would lose
 * acknowledged writes and replay later ones over a state they were never made on.
 */
function corruptJournalMessage(file: string, offset: number, size: number, later: string[]): string {
  return (
    `embedded db: journal file ${file} is corrupt at byte ${offset} of ${size}, and it is not the last ` +
    `journal file (${later.join(', ')} hold later writes), so this is not a write cut short by a crash; ` +
    `refusing to start rather than drop acknowledged writes. Restore the data directory from a backup, ` +
    `or start once with DB_REPAIR_TRUNCATE=true to cut this file at byte ${offset} (losing the ` +
    `${size - offset} bytes of records from there on) and replay the rest. Nothing has been changed.`
  );
}

function fsyncDir(dir: string): void {
  try {
    const fd = fs.openSync(dir, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // Some platforms cannot fsync directories; the rename is still atomic.
  }
}

export interface SnapshotCollection {
  db: string;
  name: string;
  options: Doc;
  uuid: Binary;
  indexes: IndexSpec[];
  /** The documents, read while the snapshot is written and re-pointed to it once it is in place. */
  docs: CapturedDocs;
}

export interface FileJournalOptions {
  dir: string;
  compactBytes?: number;
  /** A journal file that is corrupt before the last one: cut it at the damage and go on (else refuse to start). */
  repairTruncate?: boolean;
  /** Captures the current committed state, or undefined if it cannot be taken right now. */
  capture: () => SnapshotCollection[] | undefined;
  /** Where the documents are read from: this journal opens its files there and retires them. */
  files: DocFiles;
  /** An appended put's document was written and synced at `pos` of data file `file`. */
  landed: (db: string, c: string, doc: Uint8Array, file: number, pos: number) => void;
  /**
   * An append failed and every record not yet written is refused; called before any waiter hears of
   * it. `retryable`: the disk was full, the file is as it was before the append, and the next append
   * tries again; otherwise every later append is refused too.
   */
  refused: (error: Error, retryable: boolean) => void;
  logger: (msg: string, extra?: object) => void;
}

export class FileJournal implements Journal {
  private fd = -1;
  private gen = 0;
  private size = 0;
  private pending: Buffer[] = [];
  /** Per pending record: its put ops and where their documents lie in it. */
  private pendingPuts: Array<{ ops: JournalOp[]; docAt: number[] }> = [];
  /** Data file numbers (DocFiles) of the snapshot and of each journal generation, for reads. */
  private snapshotFile: number | undefined;
  private readonly genFiles = new Map<number, number>();
  private waiters: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  private flushing = false;
  private compacting: Promise<void> | undefined;
  /** After a write refused for lack of space: every append is refused until `until` (QUARANTINE_MS). */
  private quarantine: { error: Error; until: number } | undefined;
  /** performance.now() before which no snapshot is started (after one failed). */
  private nextCompactionAt = 0;
  private failed: Error | undefined;
  private closed = false;
  private readonly compactBytes: number;
  /** Group-commit statistics, logged at close: how many records each fsync carried. */
  private stats = { batches: 0, records: 0, syncMs: 0 };

  constructor(private readonly opts: FileJournalOptions) {
    this.compactBytes = opts.compactBytes ?? 64 * 1024 * 1024;
  }

  /**
   * Reads snapshot + journals, feeding every op to `apply` (a put's document is a view valid during
   * the call, found at `pos` of data file `file`), then opens the journal for appends.
   */
  load(apply: (op: JournalOp, file: number, pos: number) => void): { ops: number } {
    const dir = this.opts.dir;
    const files = this.opts.files;
    try {
      makePrivateDir(dir, this.opts.logger);
    } catch (e) {
      throw dataDirError(dir, e);
    }
    let count = 0;
    let fromGen = 0;
    let chunk: Buffer = Buffer.allocUnsafeSlow(LOAD_CHUNK);
    /** Applies a record's ops; a put's position is its document's offset in the chunk, plus the chunk's in the file. */
    const applyRecord = (file: number) => (record: ReadRecord, buf: Buffer, bufPos: number) => {
      const applyAt = (raw: Buffer, at: number): void => {
        const op = decodeOp(raw, at);
        if (op.o === 'put' && op.doc.buffer !== buf.buffer) throw new Error('embedded db: journal put not read in place');
        apply(op, file, op.o === 'put' ? bufPos + op.doc.byteOffset - buf.byteOffset : -1);
        count++;
      };
      if (!record.fields) for (const at of record.ops) applyAt(record.body, at);
      else for (const raw of record.fields.ops as Buffer[]) applyAt(raw, 0);
    };
    const snapPath = path.join(dir, SNAPSHOT);
    if (fs.existsSync(snapPath)) {
      const n = (this.snapshotFile = files.open(snapPath));
      const size = files.size(n);
      let meta: Doc | undefined;
      const applySnapshot = applyRecord(n);
      let validEnd: number;
      ({ validEnd, chunk } = streamRecords(files, n, size, chunk, (record, buf, bufPos) => {
        if (!meta) {
          meta = record.fields?.meta as Doc | undefined;
          if (!meta) throw new Error(`embedded db: snapshot ${snapPath} is corrupt; refusing to start`);
          fromGen = Number(meta.journalGen ?? 0);
        } else applySnapshot(record, buf, bufPos);
      }));
      if (validEnd !== size || !meta) throw new Error(`embedded db: snapshot ${snapPath} is corrupt; refusing to start`);
    }
    const gens = fs
      .readdirSync(dir)
      .map((f) => JOURNAL_RE.exec(f))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
    // Files are changed (old journals deleted, a damaged end cut) only once everything has been read:
    // a start-up refused below leaves the directory exactly as it found it, for a restore or a repair.
    const changes: Array<() => void> = [];
    for (const [i, g] of gens.entries()) {
      const file = path.join(dir, `journal-${g}.log`);
      if (g < fromGen) {
        changes.push(() => fs.rmSync(file, { force: true })); // already folded into the snapshot
        continue;
      }
      const n = files.open(file);
      this.genFiles.set(g, n);
      const size = files.size(n);
      // A corrupt record stops the file's replay there: what came before is applied, what follows never is.
      let validEnd: number;
      ({ validEnd, chunk } = streamRecords(files, n, size, chunk, applyRecord(n)));
      if (validEnd !== size) {
        const later = gens.slice(i + 1).map((n) => `journal-${n}.log`);
        if (later.length > 0 && !this.opts.repairTruncate) throw new Error(corruptJournalMessage(file, validEnd, size, later));
        changes.push(() => {
          if (later.length === 0) {
            // The last file's damaged end is a write a crash cut short, never acknowledged.
            this.opts.logger('embedded db: ignoring torn journal tail', { file, bytes: size - validEnd });
          } else {
            this.opts.logger('embedded db: repairTruncate: truncated a corrupt journal file that is not the last (its records from this offset on are lost)', {
              file,
              offset: validEnd,
              bytesDropped: size - validEnd,
            });
          }
          fs.truncateSync(file, validEnd);
        });
      }
    }
    this.gen = Math.max(fromGen, gens[gens.length - 1] ?? 0);
    try {
      for (const change of changes) change();
      this.openGen(this.gen);
    } catch (e) {
      throw dataDirError(dir, e);
    }
    fs.rmSync(path.join(dir, SNAPSHOT_TMP), { force: true });
    return { ops: count };
  }

  private openGen(gen: number): void {
    const file = path.join(this.opts.dir, `journal-${gen}.log`);
    const fd = fs.openSync(file, JOURNAL_OPEN_FLAGS, PRIVATE_FILE_MODE);
    try {
      const size = fs.fstatSync(fd).size;
      if (!this.genFiles.has(gen)) this.genFiles.set(gen, this.opts.files.open(file));
      // Only now: appends must never go to a file other than the one `landed` reports for `gen`.
      this.fd = fd;
      this.size = size;
    } catch (e) {
      fs.closeSync(fd);
      throw e;
    }
    fsyncDir(this.opts.dir);
  }

  append(ops: JournalOp[]): Promise<void> {
    if (this.failed) {
      // Taken back like the write that failed: memory never holds what the journal refused.
      this.opts.refused(this.failed, false);
      return Promise.reject(this.failed);
    }
    if (this.closed) return Promise.reject(new Error('journal closed'));
    if (this.quarantine && performance.now() < this.quarantine.until) {
      this.opts.refused(this.quarantine.error, true);
      return Promise.reject(this.quarantine.error);
    }
    const { buf, docAt } = frameOps(ops);
    return new Promise<void>((resolve, reject) => {
      this.pending.push(buf);
      this.pendingPuts.push({ ops, docAt });
      this.waiters.push({ resolve, reject });
      if (!this.flushing) {
        this.flushing = true;
        // Let every write of the current tick join this batch.
        setImmediate(() => void this.flushLoop());
      }
    });
  }

  private async flushLoop(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const batch = Buffer.concat(this.pending);
        const lengths = this.pending.map((b) => b.length);
        const puts = this.pendingPuts;
        const waiters = this.waiters;
        this.pending = [];
        this.pendingPuts = [];
        this.waiters = [];
        try {
          const t0 = performance.now();
          await writeAll(this.fd, batch);
          if (!O_DSYNC) await new Promise<void>((res, rej) => fs.fdatasync(this.fd, (e) => (e ? rej(e) : res())));
          this.stats.syncMs += performance.now() - t0;
          this.stats.batches++;
          this.stats.records += waiters.length;
          this.reportLanded(puts, lengths, this.size);
          this.size += batch.length;
          for (const w of waiters) w.resolve();
        } catch (e) {
          const error = e instanceof Error ? e : new Error(String(e));
          const retryable = this.cutBack(error);
          if (!retryable) this.failed = error;
          else this.quarantine = { error, until: performance.now() + QUARANTINE_MS };
          this.opts.logger(
            retryable
              ? 'embedded db: journal write failed for lack of space; the write is refused and the next one tries again'
              : 'embedded db: journal write failed; further writes are refused',
            { error: error.message },
          );
          const refused = [...waiters, ...this.waiters];
          this.waiters = [];
          this.pending = [];
          this.pendingPuts = [];
          this.opts.refused(error, retryable);
          for (const w of refused) w.reject(error);
          return;
        }
        if (this.size > this.compactBytes && !this.compacting && !this.closed && performance.now() >= this.nextCompactionAt) {
          try {
            this.startCompaction();
          } catch (e) {
            // e.g. ENOSPC opening the next journal: keep appending to the current one.
            this.opts.logger('embedded db: could not start compaction', { error: String(e) });
          }
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  /**
   * After a failed append: whether the journal can take the next one. Only a full disk qualifies,
   * and only once the file is cut back to its last synced record, so that no part of a refused
   * record (a torn one, or whole records of a batch that was refused) is ever replayed.
   */
  private cutBack(error: Error): boolean {
    if (!isOutOfSpace(error)) return false;
    try {
      fs.ftruncateSync(this.fd, this.size);
      return true;
    } catch (e) {
      this.opts.logger('embedded db: could not cut the journal back after a failed write', { error: String(e) });
      return false;
    }
  }

  /** The records of a synced batch start at `start` of the current journal: tells where each put's document is. */
  private reportLanded(puts: Array<{ ops: JournalOp[]; docAt: number[] }>, lengths: number[], start: number): void {
    const file = this.genFiles.get(this.gen)!;
    let at = start;
    puts.forEach(({ ops, docAt }, r) => {
      ops.forEach((op, i) => {
        if (op.o === 'put' && docAt[i]! >= 0) this.opts.landed(op.db, op.c, op.doc, file, at + docAt[i]!);
      });
      at += lengths[r]!;
    });
  }

  /** Switches to a new journal generation and writes a snapshot of the state at that point. */
  private startCompaction(): void {
    const state = this.opts.capture();
    if (!state) return; // e.g. a transaction holds uncommitted changes; try again later
    const newGen = this.gen + 1;
    const oldFd = this.fd;
    this.openGen(newGen); // throws before anything changed if the new journal cannot be created
    fs.closeSync(oldFd);
    this.gen = newGen;
    this.compacting = this.writeSnapshot(state, newGen)
      .catch(async (e: unknown) => {
        // A full disk fails a snapshot too: free what the partial one took, and then do not try again
        // at every append (each attempt rewrites every document) until a while has passed.
        await fsp.rm(path.join(this.opts.dir, SNAPSHOT_TMP), { force: true }).catch(() => undefined);
        if (isOutOfSpace(e)) this.nextCompactionAt = performance.now() + COMPACTION_RETRY_MS;
        this.opts.logger('embedded db: snapshot failed (journal kept)', { error: String(e) });
      })
      .finally(() => {
        this.compacting = undefined;
      });
  }

  private async writeSnapshot(state: SnapshotCollection[], gen: number): Promise<void> {
    const dir = this.opts.dir;
    const tmp = path.join(dir, SNAPSHOT_TMP);
    const files = this.opts.files;
    const fh = await fsp.open(tmp, 'w', PRIVATE_FILE_MODE);
    /** Per collection, where each of its documents is in the new snapshot. */
    const positions = state.map((c) => new Float64Array(c.docs.count));
    let n = -1;
    try {
      let size = 0;
      const write = async (buf: Buffer) => {
        await fh.write(buf);
        size += buf.length;
      };
      await write(frame({ meta: { journalGen: gen, version: 1, createdAt: new Date() } }));
      for (const [k, c] of state.entries()) {
        const head: JournalOp[] = [{ o: 'cc', db: c.db, c: c.name, opts: c.options, uuid: c.uuid }];
        for (const spec of c.indexes) head.push({ o: 'ci', db: c.db, c: c.name, spec });
        await write(frameOps(head).buf);
        for (let i = 0; i < c.docs.count; ) {
          const ops = c.docs.read(i, SNAPSHOT_RECORD).map((doc): JournalOp => ({ o: 'put', db: c.db, c: c.name, doc }));
          const { buf, docAt } = frameOps(ops);
          docAt.forEach((p, j) => {
            if (p < 0) throw new Error('snapshot record layout: a document is not where it was framed');
            positions[k]![i + j] = size + p;
          });
          await write(buf);
          i += ops.length;
        }
      }
      await fh.sync();
      n = files.open(tmp); // before the rename: the descriptor follows the file
    } finally {
      await fh.close();
    }
    try {
      await fsp.rename(tmp, path.join(dir, SNAPSHOT));
    } catch (e) {
      files.retire(n);
      throw e;
    }
    fsyncDir(dir);
    // Documents not rewritten since the capture are read from the new snapshot from now on; the
    // older files hold nothing current any more (rewrites went to the journal of `gen`).
    state.forEach((c, k) => c.docs.moved(n, positions[k]!));
    if (this.snapshotFile !== undefined) files.retire(this.snapshotFile);
    this.snapshotFile = n;
    for (const [g, f] of this.genFiles) {
      if (g >= gen) continue;
      files.retire(f);
      this.genFiles.delete(g);
    }
    for (const f of await fsp.readdir(dir)) {
      const m = JOURNAL_RE.exec(f);
      if (m && Number(m[1]) < gen) await fsp.rm(path.join(dir, f), { force: true });
    }
    this.opts.logger('embedded db: snapshot written', { journalGen: gen });
  }

  async close(): Promise<void> {
    // Drain outstanding appends so that every acknowledged write is on disk.
    while (this.flushing || this.pending.length) await new Promise((r) => setTimeout(r, 5));
    if (this.compacting) await this.compacting;
    this.closed = true;
    if (this.fd >= 0) fs.closeSync(this.fd);
    const { batches, records, syncMs } = this.stats;
    if (batches) {
      this.opts.logger('embedded db: journal closed', {
        appends: batches,
        recordsPerAppend: +(records / batches).toFixed(1),
        avgWriteAndSyncMs: +(syncMs / batches).toFixed(2),
      });
    }
    this.fd = -1;
  }
}

/**
 * The journal is opened with O_DSYNC where the platform has it: each write returns once its bytes are on
 * disk, as write + fdatasync would, in one trip to libuv's thread pool instead of two. Under load each trip
 * also waits for this thread's event loop to take its completion, and that wait, not the disk, was most
 * of a flush (bench:rail journaled at 300/s: ~100 flushes/s of 7-13 ms each, the journal busy ~90 % of the
 * time, where write + fdatasync of the same 40 KB takes 0.3 ms on an idle loop; with O_DSYNC, 3-8 ms in
 * the same run, measured by timing each flush). Where O_DSYNC is missing (Windows), write then fdatasync.
 */
const O_DSYNC = fs.constants.O_DSYNC ?? 0;
const JOURNAL_OPEN_FLAGS = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_APPEND | O_DSYNC;

/** The disk (or the user's quota) is full: space may come back. */
export function isOutOfSpace(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

async function writeAll(fd: number, buf: Buffer): Promise<void> {
  let off = 0;
  while (off < buf.length) {
    const n = await new Promise<number>((res, rej) =>
      fs.write(fd, buf, off, buf.length - off, null, (e, written) => (e ? rej(e) : res(written))),
    );
    off += n;
  }
}
