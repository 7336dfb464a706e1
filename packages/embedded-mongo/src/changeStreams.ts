/**
 * Change streams: an in-memory, bounded log of committed changes (the "oplog") and cursors
 * reading from it. Resume tokens encode this process's id plus the log sequence number, so
 * resumeAfter / startAfter work for as long as the process lives and the event is retained.
 */
import { Aggregator, ProcessingMode, Query } from 'mingo';
import { Timestamp } from 'bson';
import { decodeStored, encodeDoc, storedBytesOf } from './docStore';
import { ErrorCodes, MongoCommandError, badValue } from './errors';
import { deepEqual, isPlainObject, type Doc } from './values';

export type OperationType = 'insert' | 'update' | 'replace' | 'delete' | 'drop' | 'dropDatabase' | 'invalidate';

/** A change as recorded by a write, before it is committed to the log. */
export interface ChangeDraft {
  op: OperationType;
  db: string;
  coll?: string;
  id?: unknown;
  before?: Doc;
  after?: Doc;
  lsid?: unknown;
  txnNumber?: unknown;
}

export interface ChangeEvent extends ChangeDraft {
  seq: number;
  ts: Timestamp;
  wall: Date;
  /** `before` and `after` as BSON, once the event is no longer among the RECENT_DECODED newest. */
  beforeBytes?: Uint8Array;
  afterBytes?: Uint8Array;
}

/** Events kept for resuming; trimmed in chunks so publishing stays O(1) amortised. */
const MAX_EVENTS = 10_000;
/**
 * How many of the newest events keep their documents decoded: the streams that keep up read them
 * within moments of the write, as the objects the write made. Older ones keep the stored BSON bytes
 * and are decoded again if a stream that fell behind (or resumes) reads them. Kept as objects, the
 * documents of 10,000 events lived seconds, long enough to be promoted, and made most of the engine's
 * old-generation garbage under a steady write load.
 */
const RECENT_DECODED = 256;

/** The document before the change, decoded again when the event kept only its bytes. */
function beforeOf(e: ChangeEvent): Doc | undefined {
  return e.before ?? (e.beforeBytes ? decodeStored(e.beforeBytes) : undefined);
}

function afterOf(e: ChangeEvent): Doc | undefined {
  return e.after ?? (e.afterBytes ? decodeStored(e.afterBytes) : undefined);
}

/** Lets go of an event's documents as objects, keeping them as BSON (the stored bytes when known). */
function keepAsBytes(e: ChangeEvent): void {
  if (e.before) {
    e.beforeBytes = storedBytesOf(e.before) ?? encodeDoc(e.before);
    e.before = undefined;
  }
  if (e.after) {
    e.afterBytes = storedBytesOf(e.after) ?? encodeDoc(e.after);
    e.after = undefined;
  }
}
const TOKEN_PREFIX = 'E1';

export type DocLookup = (db: string, coll: string, id: unknown) => Doc | undefined;

export class ChangeLog {
  private events: ChangeEvent[] = [];
  private head = 0;
  /** Blocked getMores: how to wake each, and which changes concern it (none given: all). */
  private waiters = new Map<() => void, ((d: ChangeDraft) => boolean) | undefined>();
  readonly instance = Math.floor(Math.random() * 0xffffffff).toString(16).padStart(8, '0');

  constructor(private readonly nextTs: () => Timestamp) {}

  get headSeq(): number {
    return this.head;
  }

  publish(drafts: ChangeDraft[]): void {
    if (drafts.length === 0) return;
    const wall = new Date();
    for (const d of drafts) {
      // Drafts are owned by the log from here on; stamp them in place instead of copying.
      const e = d as ChangeEvent;
      e.seq = ++this.head;
      e.ts = this.nextTs();
      e.wall = wall;
      this.events.push(e);
      const aged = this.events[this.events.length - 1 - RECENT_DECODED];
      if (aged) keepAsBytes(aged);
    }
    if (this.events.length > MAX_EVENTS * 1.25) this.events = this.events.slice(this.events.length - MAX_EVENTS);
    // Only streams that can see one of these changes are woken: every write command would otherwise
    // make each waiting stream of another namespace re-scan the log and re-arm its timer for nothing.
    // A stream left asleep still moves past these changes on its next scan.
    if (this.waiters.size) {
      for (const [w, wanted] of [...this.waiters]) if (!wanted || drafts.some(wanted)) w();
    }
  }

  token(seq: number): Doc {
    return { _data: `${TOKEN_PREFIX}${this.instance}${seq.toString(16).padStart(16, '0')}` };
  }

  /** Sequence number encoded in a resume token; throws if it does not belong to this log. */
  parseToken(token: unknown): number {
    const data = isPlainObject(token) ? token._data : undefined;
    if (typeof data !== 'string' || !data.startsWith(TOKEN_PREFIX) || data.length !== 26) {
      throw badValue('invalid resume token');
    }
    const seq = Number.parseInt(data.slice(10), 16);
    const oldest = this.events[0]?.seq ?? this.head + 1;
    if (data.slice(2, 10) !== this.instance || seq > this.head || (seq < oldest - 1 && seq !== this.head)) {
      throw new MongoCommandError(
        ErrorCodes.ChangeStreamHistoryLost,
        'Resume of change stream was not possible, as the resume point may no longer be in the oplog.',
      );
    }
    return seq;
  }

  /** First sequence number whose cluster time is >= ts, minus one (a position). */
  positionAt(ts: Timestamp): number {
    for (const e of this.events) if (e.ts.compare(ts) >= 0) return e.seq - 1;
    return this.head;
  }

  *after(seq: number): Generator<ChangeEvent> {
    const first = this.events[0]?.seq ?? this.head + 1;
    for (let i = Math.max(0, seq + 1 - first); i < this.events.length; i++) yield this.events[i]!;
  }

  /** Resolves when a change `wanted` accepts (any change if not given) is published, or after `ms`. */
  waitForEvents(ms: number, wanted?: (d: ChangeDraft) => boolean): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.set(done, wanted);
    });
  }

  wakeAll(): void {
    for (const w of [...this.waiters.keys()]) w();
  }
}

export interface ChangeStreamOptions {
  db: string;
  /** undefined: whole database (or whole cluster when allChangesForCluster). */
  coll?: string;
  allChangesForCluster: boolean;
  fullDocument: string;
  fullDocumentBeforeChange: string;
  showExpandedEvents: boolean;
}

/** One open change stream; `position` is the last log sequence number examined. */
export class ChangeStreamCursor {
  position: number;
  /** The stages after a leading `$match` (all of them if there is none). */
  private readonly pipeline: Aggregator | undefined;
  /**
   * A leading `$match`, run as one mingo Query compiled on first use: mingo's `$match` stage compiles
   * its query again on every run, i.e. for every event (compiled lazily so that a bad expression
   * still fails where it did, at the first event in scope).
   */
  private readonly leadingMatch: Doc | undefined;
  private match: Query | undefined;
  /**
   * The operation type a leading `$match` starts with (`{ operationType: 'insert', ... }`): events of
   * other types cannot match, so they are skipped before toDoc builds them (an update's diff
   * included). Only when it is the first condition, which mingo tests first and stops at.
   */
  private readonly onlyOp: string | undefined;

  constructor(
    private readonly log: ChangeLog,
    private readonly opts: ChangeStreamOptions,
    stages: Doc[],
    start: number,
    private readonly lookup: DocLookup,
  ) {
    this.position = start;
    const first = stages[0];
    if (first && Object.keys(first).length === 1 && isPlainObject(first.$match)) {
      this.leadingMatch = first.$match;
      const [k] = Object.keys(first.$match);
      const op = first.$match.operationType;
      if (k === 'operationType' && typeof op === 'string') this.onlyOp = op;
      stages = stages.slice(1);
    }
    // Cloned input: a change's documents are the stored versions, which $set/$unset stages would
    // otherwise write into.
    this.pipeline = stages.length ? new Aggregator(stages, { processingMode: ProcessingMode.CLONE_INPUT }) : undefined;
  }

  /** Whether a change is in this stream's namespace (the stream need not wake for others). */
  inScope(e: ChangeDraft): boolean {
    if (this.opts.allChangesForCluster) return true;
    if (e.db !== this.opts.db) return false;
    return this.opts.coll === undefined || e.coll === undefined || e.coll === this.opts.coll;
  }

  private toDoc(e: ChangeEvent): Doc {
    const out: Doc = {
      _id: this.log.token(e.seq),
      operationType: e.op,
      clusterTime: e.ts,
      wallTime: e.wall,
    };
    if (e.coll !== undefined) out.ns = { db: e.db, coll: e.coll };
    else out.ns = { db: e.db };
    if (e.op === 'insert' || e.op === 'update' || e.op === 'replace' || e.op === 'delete') {
      out.documentKey = { _id: e.id };
    }
    const fd = this.opts.fullDocument;
    if (e.op === 'insert' || e.op === 'replace') out.fullDocument = afterOf(e);
    else if (e.op === 'update') {
      const after = afterOf(e);
      if (fd === 'updateLookup') out.fullDocument = this.lookup(e.db, e.coll!, e.id) ?? null;
      else if (fd === 'whenAvailable' || fd === 'required') out.fullDocument = after ?? null;
      out.updateDescription = diff(beforeOf(e) ?? {}, after ?? {});
    }
    const fdb = this.opts.fullDocumentBeforeChange;
    if ((fdb === 'whenAvailable' || fdb === 'required') && e.op !== 'insert') {
      out.fullDocumentBeforeChange = beforeOf(e) ?? null;
    }
    if (e.lsid !== undefined) {
      out.lsid = e.lsid;
      out.txnNumber = e.txnNumber;
    }
    return out;
  }

  /** Next matching events after `position`, at most `max`. Advances position past examined ones. */
  next(max: number): Doc[] {
    const out: Doc[] = [];
    for (const e of this.log.after(this.position)) {
      if (out.length >= max) break;
      this.position = e.seq;
      if (!this.inScope(e)) continue;
      if (this.leadingMatch) this.match ??= new Query(this.leadingMatch);
      if (this.onlyOp === undefined || e.op === this.onlyOp) {
        const doc = this.toDoc(e);
        if (!this.match || this.match.test(doc)) out.push(...(this.pipeline ? (this.pipeline.run([doc]) as Doc[]) : [doc]));
      }
      // A collection stream ends with drop + invalidate, as on a real server.
      if (this.opts.coll !== undefined && (e.op === 'drop' || e.op === 'dropDatabase')) {
        out.push({ _id: this.log.token(e.seq), operationType: 'invalidate', clusterTime: e.ts, wallTime: e.wall });
        this.invalidated = true;
        break;
      }
    }
    return out;
  }

  invalidated = false;

  get resumeToken(): Doc {
    return this.log.token(this.position);
  }
}

function diff(before: Doc, after: Doc): Doc {
  const updatedFields: Doc = {};
  const removedFields: string[] = [];
  for (const k of Object.keys(after)) if (!deepEqual(before[k], after[k])) updatedFields[k] = after[k];
  for (const k of Object.keys(before)) if (!(k in after)) removedFields.push(k);
  return { updatedFields, removedFields, truncatedArrays: [] };
}
