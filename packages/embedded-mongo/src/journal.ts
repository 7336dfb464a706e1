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
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import { Binary, deserialize, serialize } from 'bson';
import { arrayOfRaw, readPutOp, serializeWithRaw } from './bsonRaw';
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

/** A record `{ ops: [...] }`; put ops carry their document's stored bytes, copied in as they are. */
function frameOps(ops: JournalOp[]): Buffer {
  return frameBody(arrayOfRaw('ops', ops.map(encodeOp)));
}

function encodeOp(op: JournalOp): Uint8Array {
  if (op.o !== 'put') return serialize(op);
  return serializeWithRaw({ o: op.o, db: op.db, c: op.c }, [['doc', op.doc]]);
}

/** A journal op; a put's document stays bytes (installed as stored, never decoded at start-up). */
function decodeOp(raw: Uint8Array): JournalOp {
  const put = readPutOp(raw);
  if (put) return { o: 'put', ...put };
  const op = deserialize(raw, OP_OPTS) as JournalOp;
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

/** Parses framed records; returns the payloads and the byte offset where valid data ends. */
function readRecords(buf: Buffer): { records: Doc[]; validEnd: number } {
  const records: Doc[] = [];
  let off = 0;
  while (off + HEADER <= buf.length) {
    const len = buf.readUInt32LE(off);
    const crc = buf.readUInt32LE(off + 4);
    if (len < 5 || off + HEADER + len > buf.length) break;
    const body = buf.subarray(off + HEADER, off + HEADER + len);
    if (crc32(body) !== crc) break;
    try {
      // Ops stay bytes here: a put's document is installed as stored bytes, never decoded at start-up.
      records.push(deserialize(body, RECORD_OPTS));
    } catch {
      break;
    }
    off += HEADER + len;
  }
  return { records, validEnd: off };
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
  /** Each document's stored BSON bytes. */
  docs: Uint8Array[];
}

export interface FileJournalOptions {
  dir: string;
  compactBytes?: number;
  /** A journal file that is corrupt before the last one: cut it at the damage and go on (else refuse to start). */
  repairTruncate?: boolean;
  /** Captures the current committed state, or undefined if it cannot be taken right now. */
  capture: () => SnapshotCollection[] | undefined;
  logger: (msg: string, extra?: object) => void;
}

export class FileJournal implements Journal {
  private fd = -1;
  private gen = 0;
  private size = 0;
  private pending: Buffer[] = [];
  private waiters: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  private flushing = false;
  private compacting: Promise<void> | undefined;
  private failed: Error | undefined;
  private closed = false;
  private readonly compactBytes: number;
  /** Group-commit statistics, logged at close: how many records each fsync carried. */
  private stats = { batches: 0, records: 0, syncMs: 0 };

  constructor(private readonly opts: FileJournalOptions) {
    this.compactBytes = opts.compactBytes ?? 64 * 1024 * 1024;
  }

  /** Reads snapshot + journals, feeding every op to `apply`, then opens the journal for appends. */
  load(apply: (op: JournalOp) => void): { ops: number } {
    const dir = this.opts.dir;
    makePrivateDir(dir, this.opts.logger);
    let count = 0;
    let fromGen = 0;
    const snapPath = path.join(dir, SNAPSHOT);
    if (fs.existsSync(snapPath)) {
      const buf = fs.readFileSync(snapPath);
      const { records, validEnd } = readRecords(buf);
      if (validEnd !== buf.length || !records[0]?.meta) {
        throw new Error(`embedded db: snapshot ${snapPath} is corrupt; refusing to start`);
      }
      fromGen = Number((records[0].meta as Doc).journalGen ?? 0);
      for (const r of records.slice(1)) {
        for (const raw of r.ops as Uint8Array[]) {
          apply(decodeOp(raw));
          count++;
        }
      }
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
      const buf = fs.readFileSync(file);
      const { records, validEnd } = readRecords(buf);
      if (validEnd !== buf.length) {
        const later = gens.slice(i + 1).map((n) => `journal-${n}.log`);
        if (later.length > 0 && !this.opts.repairTruncate) throw new Error(corruptJournalMessage(file, validEnd, buf.length, later));
        changes.push(() => {
          if (later.length === 0) {
            // The last file's damaged end is a write a crash cut short, never acknowledged.
            this.opts.logger('embedded db: ignoring torn journal tail', { file, bytes: buf.length - validEnd });
          } else {
            this.opts.logger('embedded db: repairTruncate: truncated a corrupt journal file that is not the last (its records from this offset on are lost)', {
              file,
              offset: validEnd,
              bytesDropped: buf.length - validEnd,
            });
          }
          fs.truncateSync(file, validEnd);
        });
      }
      for (const r of records) {
        for (const raw of r.ops as Uint8Array[]) {
          apply(decodeOp(raw));
          count++;
        }
      }
    }
    for (const change of changes) change();
    this.gen = Math.max(fromGen, gens[gens.length - 1] ?? 0);
    this.openGen(this.gen);
    fs.rmSync(path.join(dir, SNAPSHOT_TMP), { force: true });
    return { ops: count };
  }

  private openGen(gen: number): void {
    const file = path.join(this.opts.dir, `journal-${gen}.log`);
    this.fd = fs.openSync(file, 'a', PRIVATE_FILE_MODE);
    this.size = fs.fstatSync(this.fd).size;
    fsyncDir(this.opts.dir);
  }

  append(ops: JournalOp[]): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.closed) return Promise.reject(new Error('journal closed'));
    const buf = frameOps(ops);
    return new Promise<void>((resolve, reject) => {
      this.pending.push(buf);
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
        const waiters = this.waiters;
        this.pending = [];
        this.waiters = [];
        try {
          const t0 = performance.now();
          await writeAll(this.fd, batch);
          await new Promise<void>((res, rej) => fs.fdatasync(this.fd, (e) => (e ? rej(e) : res())));
          this.stats.syncMs += performance.now() - t0;
          this.stats.batches++;
          this.stats.records += waiters.length;
          this.size += batch.length;
          for (const w of waiters) w.resolve();
        } catch (e) {
          this.failed = e instanceof Error ? e : new Error(String(e));
          this.opts.logger('embedded db: journal write failed; further writes are refused', {
            error: this.failed.message,
          });
          for (const w of [...waiters, ...this.waiters]) w.reject(this.failed);
          this.waiters = [];
          this.pending = [];
          return;
        }
        if (this.size > this.compactBytes && !this.compacting && !this.closed) {
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
      .catch((e: unknown) => {
        this.opts.logger('embedded db: snapshot failed (journal kept)', { error: String(e) });
      })
      .finally(() => {
        this.compacting = undefined;
      });
  }

  private async writeSnapshot(state: SnapshotCollection[], gen: number): Promise<void> {
    const dir = this.opts.dir;
    const tmp = path.join(dir, SNAPSHOT_TMP);
    const fh = await fsp.open(tmp, 'w', PRIVATE_FILE_MODE);
    try {
      await fh.write(frame({ meta: { journalGen: gen, version: 1, createdAt: new Date() } }));
      for (const c of state) {
        const head: JournalOp[] = [{ o: 'cc', db: c.db, c: c.name, opts: c.options, uuid: c.uuid }];
        for (const spec of c.indexes) head.push({ o: 'ci', db: c.db, c: c.name, spec });
        await fh.write(frameOps(head));
        for (let i = 0; i < c.docs.length; i += 1000) {
          const ops = c.docs.slice(i, i + 1000).map((doc): JournalOp => ({ o: 'put', db: c.db, c: c.name, doc }));
          await fh.write(frameOps(ops));
        }
      }
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fsp.rename(tmp, path.join(dir, SNAPSHOT));
    fsyncDir(dir);
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

async function writeAll(fd: number, buf: Buffer): Promise<void> {
  let off = 0;
  while (off < buf.length) {
    const n = await new Promise<number>((res, rej) =>
      fs.write(fd, buf, off, buf.length - off, null, (e, written) => (e ? rej(e) : res(written))),
    );
    off += n;
  }
}
