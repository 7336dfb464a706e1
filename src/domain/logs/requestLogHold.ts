import type { RequestLogRecord } from './requestLogModel';

/**
 * The most request-log entries a process holds, queued and being inserted (docs/operations.md, "Bounds"): ten
 * full inserts, some seconds of a slow database at the bench's fastest rates. Past it the oldest unsent go:
 * the log is diagnostic, and payments and events never wait here. More:
 * docs/decisions/notes/events-and-payments.md, "Request log entries held".
 */
export const HELD_MAX_ENTRIES = 5_000;
export const HELD_MAX_BYTES = 32 * 1024 * 1024;

/** The fields beside the bodies and the path: ids, method, numbers, a Date, the object itself. */
const ENTRY_OVERHEAD_BYTES = 512;

/**
 * Estimated heap of an entry: its strings at one byte per character (JSON and paths are ASCII as a
 * rule; a string with other characters takes two) plus the fixed part. A queued entry's bodies are the
 * request's own text, up to MAX_BODY_BYTES; an entry being written holds them redacted and cut to 4 KiB.
 */
export function entryBytes(entry: RequestLogRecord): number {
  return ENTRY_OVERHEAD_BYTES + entry.path.length + (entry.request_body?.length ?? 0) + (entry.response_body?.length ?? 0);
}

/** Entries taken for one insert, and the bytes they count for until it ends. */
export interface TakenBatch {
  entries: RequestLogRecord[];
  bytes: number;
}

/**
 * The entries of a process's request log not yet in the database: queued (not sent, oldest first) and
 * taken by inserts under way. Within HELD_MAX_ENTRIES and HELD_MAX_BYTES in all: past them the oldest
 * queued entries are dropped (those taken are the driver's already and end with their insert).
 */
export class RequestLogHold {
  private queue: RequestLogRecord[] = [];
  private queuedBytes = 0;
  private writingEntries = 0;
  private writingBytes = 0;

  constructor(
    private readonly maxEntries = HELD_MAX_ENTRIES,
    private readonly maxBytes = HELD_MAX_BYTES,
  ) {}

  get queued(): number {
    return this.queue.length;
  }

  held(): { entries: number; bytes: number } {
    return { entries: this.queue.length + this.writingEntries, bytes: this.queuedBytes + this.writingBytes };
  }

  /** Queues `entry`; returns how many queued entries, oldest first, were dropped to keep within the bounds (`entry` itself, last). */
  add(entry: RequestLogRecord): number {
    this.queue.push(entry);
    this.queuedBytes += entryBytes(entry);
    let dropped = 0;
    while (this.queue.length > 0 && (this.queue.length + this.writingEntries > this.maxEntries || this.queuedBytes + this.writingBytes > this.maxBytes)) {
      this.queuedBytes -= entryBytes(this.queue.shift()!);
      dropped++;
    }
    return dropped;
  }

  /** The oldest `max` queued entries, through `prepare` (the redaction), counted as being written until `written`. */
  take(max: number, prepare: (entry: RequestLogRecord) => RequestLogRecord): TakenBatch {
    const raw = this.queue.length <= max ? this.queue : this.queue.slice(0, max);
    this.queue = raw === this.queue ? [] : this.queue.slice(max);
    let rawBytes = 0;
    let bytes = 0;
    const entries = raw.map((entry) => {
      rawBytes += entryBytes(entry);
      const prepared = prepare(entry);
      bytes += entryBytes(prepared);
      return prepared;
    });
    this.queuedBytes -= rawBytes;
    this.writingEntries += entries.length;
    this.writingBytes += bytes;
    return { entries, bytes };
  }

  /** The insert of `batch` ended, whatever its outcome: its entries are no longer held here. */
  written(batch: TakenBatch): void {
    this.writingEntries -= batch.entries.length;
    this.writingBytes -= batch.bytes;
  }
}
