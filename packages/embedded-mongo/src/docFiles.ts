/**
 * The data directory's files that hold stored documents (the snapshot and the journals), open for
 * reading. With a data directory a document's bytes are not kept in memory: its collection remembers
 * in which of these files, at what offset and how long they are (fileDocStore.ts), and reads them
 * back with a positional read when a command needs the document. The operating system's page cache
 * keeps the recently read parts in memory, outside the process and shared with the files' writes.
 *
 * Files are numbered in the order they are opened and a number is never reused: a retired file (an
 * old snapshot or journal, once a new snapshot holds its documents) is closed, and reading it again
 * is an error, never a read of whatever file got its descriptor.
 */
import fs from 'node:fs';

/** Reads of a scan are merged into one pread when the documents are this close (bytes) in a file. */
const SCAN_GAP = 64 * 1024;
/** Buffer of one scan read, reused from read to read (grown for a larger document). */
const SCAN_WINDOW = 1024 * 1024;

/** Where some documents are: file numbers, offsets and lengths, indexed alike. */
export interface DocPlaces {
  file: Int32Array;
  pos: Float64Array;
  len: Int32Array;
}

export class DocFiles {
  private fds: number[] = [];
  private names: string[] = [];
  private window: Buffer | undefined;

  /** Opens `file` for reading; returns its number. */
  open(file: string): number {
    this.fds.push(fs.openSync(file, 'r'));
    this.names.push(file);
    return this.fds.length - 1;
  }

  /** The file's size in bytes. */
  size(n: number): number {
    return fs.fstatSync(this.fdOf(n)).size;
  }

  /** The file's documents are all elsewhere now (or the file is gone): closes it. */
  retire(n: number): void {
    const fd = this.fds[n];
    if (fd === undefined || fd < 0) return;
    this.fds[n] = -1;
    fs.closeSync(fd);
  }

  /** Retires every file opened before `n`. */
  retireBefore(n: number): void {
    for (let i = 0; i < n; i++) this.retire(i);
  }

  closeAll(): void {
    this.retireBefore(this.fds.length);
  }

  private fdOf(n: number): number {
    const fd = this.fds[n];
    if (fd === undefined || fd < 0) throw new Error(`embedded db: stored document read from a closed data file (${this.names[n] ?? n})`);
    return fd;
  }

  /** `len` bytes at `pos` of file `n`, in a buffer of their own. */
  read(n: number, pos: number, len: number): Buffer {
    const out = Buffer.allocUnsafe(len);
    this.readInto(n, out, 0, len, pos);
    return out;
  }

  /**
   * Visits the documents `order` lists (indexes into `places`), reading each stretch of a file
   * where they lie close together with one pread into a reused buffer. `visit` gets the buffer and
   * the document's offset in it: valid only during the call. Reads go in file order whatever the
   * order of `order`; a start-up or index build over a whole collection reads each file once.
   */
  scan(places: DocPlaces, order: ArrayLike<number>, visit: (i: number, buf: Buffer, offset: number) => void): void {
    const sorted = Array.from(order).sort((a, b) => places.file[a]! - places.file[b]! || places.pos[a]! - places.pos[b]!);
    let k = 0;
    while (k < sorted.length) {
      const first = sorted[k]!;
      const file = places.file[first]!;
      const start = places.pos[first]!;
      let end = start + places.len[first]!;
      if (!this.window || this.window.length < end - start) this.window = Buffer.allocUnsafeSlow(Math.max(SCAN_WINDOW, end - start));
      let last = k + 1;
      for (; last < sorted.length; last++) {
        const i = sorted[last]!;
        const e = places.pos[i]! + places.len[i]!;
        if (places.file[i] !== file || places.pos[i]! > end + SCAN_GAP || e - start > this.window.length) break;
        end = Math.max(end, e);
      }
      this.readInto(file, this.window, 0, end - start, start);
      for (; k < last; k++) visit(sorted[k]!, this.window, places.pos[sorted[k]!]! - start);
    }
  }

  /** Reads `len` bytes at `pos` of file `n` into `buf` at `at`. */
  readInto(n: number, buf: Buffer, at: number, len: number, pos: number): void {
    const fd = this.fdOf(n);
    let done = 0;
    while (done < len) {
      const got = fs.readSync(fd, buf, at + done, len - done, pos + done);
      if (got === 0) throw new Error(`embedded db: data file ${this.names[n]} ends before byte ${pos + len}`);
      done += got;
    }
  }
}
