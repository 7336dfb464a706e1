/**
 * The storage engine: catalog of databases/collections and the write primitives every command
 * goes through. A write is applied to memory synchronously (atomic per document), recorded as a
 * physical redo op (the whole new document, or a delete) and as a change event; `finish()` then
 * makes it durable in the journal before the command is acknowledged and the event is published.
 * Inside a transaction the op/event is kept on the transaction until commit instead.
 *
 * A write the journal refuses (a full disk) is taken back: every change applied in memory and not yet
 * journaled is undone, newest first, and every command that made one is answered with the refusal
 * (refuseUnjournaled). Memory then holds exactly what the journal holds, and the next write tries the
 * journal again: writes come back as soon as there is space, without a restart.
 */
import { Binary } from 'bson';
import { ChangeLog, type ChangeDraft } from './changeStreams';
import { Clock } from './clock';
import { Collection } from './collection';
import { CommandCounters } from './commandCounters';
import { CursorRegistry } from './cursors';
import { DocFiles } from './docFiles';
import { decodeDoc } from './docStore';
import { ErrorCodes, MongoCommandError } from './errors';
import type { IndexSpec } from './indexes';
import { FileJournal, isOutOfSpace, MemoryJournal, type Journal, type JournalOp, type SnapshotCollection } from './journal';
import { TransactionManager, WaitForTransaction, type Transaction } from './transactions';
import { canonicalKey, type Doc } from './values';

export type Logger = (msg: string, extra?: object) => void;

/** Idle-time building of deferred indexes: after the start-up's first commands, a step, a retry after a read error. */
const DEFERRED_INDEXES_AFTER_MS = 1_000;
const DEFERRED_INDEX_STEP_MS = 20;
const DEFERRED_INDEXES_RETRY_MS = 10_000;

export interface EngineOptions {
  dataDir?: string;
  logger?: Logger;
  /** Open transactions older than this are aborted. Default 60 s. */
  transactionLifetimeMs?: number;
  /** Journal size that triggers a snapshot. Default 64 MB. */
  compactBytes?: number;
  /** Cut a corrupt journal file that is not the last at the damage and go on (default: refuse to start). */
  repairTruncate?: boolean;
}

/** How to take back one change applied in memory, and its place among every command's changes. */
interface UndoStep {
  seq: number;
  run: () => void;
}

/** Per-command record of what it changed outside any transaction. */
export class OpContext {
  readonly ops: JournalOp[] = [];
  readonly events: ChangeDraft[] = [];
  /** With a data directory: how to take back this command's changes until its journal record lands. */
  readonly undo: UndoStep[] = [];
  /** Set when the journal refused a write and this command's changes were taken back: it changes nothing more. */
  refused: MongoCommandError | undefined;
  constructor(
    readonly db: string,
    readonly txn: Transaction | undefined,
  ) {}
}

export class Engine {
  readonly dbs = new Map<string, Map<string, Collection>>();
  readonly clock = new Clock();
  readonly changes = new ChangeLog(() => this.clock.next());
  readonly cursors = new CursorRegistry();
  /** serverStatus's opcounters and metrics.commands (commandCounters.ts). */
  readonly counters = new CommandCounters();
  readonly txns: TransactionManager;
  readonly logger: Logger;
  private journal: Journal = new MemoryJournal();
  /** With a data directory: its files, where stored documents are read from. */
  private files: DocFiles | undefined;
  /** True while open() replays the data directory: documents go in, indexes are built at the end. */
  private loading = false;
  /** Commands with changes applied in memory whose journal record has not landed (see refuseUnjournaled). */
  private readonly unjournaled = new Set<OpContext>();
  /** Orders undo steps across commands: a command's statements interleave with other commands'. */
  private changeSeq = 0;
  /** The next idle-time step building a deferred index (see buildDeferredIndexesLater). */
  private deferredIndexTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: EngineOptions = {}) {
    this.logger = options.logger ?? (() => {});
    this.txns = new TransactionManager(options.transactionLifetimeMs ?? 60_000, (txn) => {
      if (txn.state === 'active' && !txn.committing) {
        this.logger('embedded db: aborting transaction that stayed open too long', { txnNumber: txn.txnNumber });
        this.txns.abort(txn);
      }
    });
  }

  /** Loads the data directory (if any) and starts journaling. */
  open(): void {
    const dir = this.options.dataDir;
    if (!dir) return;
    const files = (this.files = new DocFiles());
    const fj = new FileJournal({
      dir,
      compactBytes: this.options.compactBytes,
      repairTruncate: this.options.repairTruncate,
      capture: () => this.capture(),
      files,
      landed: (db, c, doc, file, pos) => this.getCollection(db, c)?.landed(doc, file, pos),
      refused: (error, retryable) => this.refuseUnjournaled(error, retryable),
      logger: this.logger,
    });
    this.loading = true;
    let ops: number;
    try {
      ({ ops } = fj.load((op, file, pos) => this.applyOp(op, file, pos)));
    } catch (e) {
      files.closeAll(); // a refused start-up keeps no descriptor open
      throw e;
    } finally {
      this.loading = false;
    }
    for (const c of this.collections()) c.finishLoad(this.indexDropped(c)).forEach(this.indexDropped(c));
    this.buildDeferredIndexesLater(DEFERRED_INDEXES_AFTER_MS);
    this.journal = fj;
    let docs = 0;
    for (const colls of this.dbs.values()) for (const c of colls.values()) docs += c.size;
    this.logger('embedded db: data loaded', { dataDir: dir, replayedOps: ops, documents: docs });
  }

  private *collections(): Generator<Collection> {
    for (const colls of this.dbs.values()) yield* colls.values();
  }

  private indexDropped(c: Collection): (d: { index: string; error: string }) => void {
    return (d) => this.logger('embedded db: could not rebuild index during recovery', { collection: c.ns, ...d });
  }

  /**
   * The indexes a start-up deferred (Collection.finishLoad) are built in idle time too, one per step,
   * so that the first queries to need them after a start-up mostly find them built; commands are
   * served between steps. A step that cannot read the files is tried again later.
   */
  private buildDeferredIndexesLater(delayMs: number, built = 0, cpuMs = 0): void {
    this.deferredIndexTimer = setTimeout(() => {
      const t0 = performance.now();
      for (const c of this.collections()) {
        let name: string | undefined;
        try {
          name = c.buildNextDeferredIndex(this.indexDropped(c));
        } catch (err) {
          this.logger('embedded db: could not build a deferred index yet; trying again', { collection: c.ns, error: String(err) });
          return this.buildDeferredIndexesLater(DEFERRED_INDEXES_RETRY_MS, built, cpuMs);
        }
        if (name !== undefined) return this.buildDeferredIndexesLater(DEFERRED_INDEX_STEP_MS, built + 1, cpuMs + performance.now() - t0);
      }
      if (built > 0) this.logger('embedded db: deferred indexes built', { indexes: built, ms: Math.round(cpuMs) });
    }, delayMs);
    this.deferredIndexTimer.unref();
  }

  async close(): Promise<void> {
    clearTimeout(this.deferredIndexTimer);
    this.txns.abortAll();
    this.changes.wakeAll();
    this.cursors.close();
    await this.journal.close();
    this.files?.closeAll();
  }

  getCollection(db: string, name: string): Collection | undefined {
    return this.dbs.get(db)?.get(name);
  }

  ensureCollection(op: OpContext, db: string, name: string, options: Doc = {}): Collection {
    const existing = this.getCollection(db, name);
    if (existing) return existing;
    this.checkRefused(op);
    validateNamespace(db, name);
    const coll = new Collection(db, name, options, undefined, this.files);
    let colls = this.dbs.get(db);
    if (!colls) this.dbs.set(db, (colls = new Map()));
    colls.set(name, coll);
    op.ops.push({ o: 'cc', db, c: name, opts: options, uuid: coll.uuid });
    this.remember(op, () => {
      // Documents a journaled write put in it since keep it (replay creates it for them too).
      if (coll.size === 0 && this.dbs.get(db)?.get(name) === coll) this.removeFromCatalog(db, name);
    });
    return coll;
  }

  createCollection(op: OpContext, db: string, name: string, options: Doc): Collection {
    if (this.getCollection(db, name)) {
      throw new MongoCommandError(ErrorCodes.NamespaceExists, `Collection ${db}.${name} already exists.`);
    }
    return this.ensureCollection(op, db, name, options);
  }

  dropCollection(op: OpContext, db: string, name: string): Collection | undefined {
    const coll = this.getCollection(db, name);
    if (!coll) return undefined;
    this.checkRefused(op);
    this.removeFromCatalog(db, name);
    op.ops.push({ o: 'dc', db, c: name });
    this.remember(op, () => {
      if (!this.getCollection(db, name)) this.addToCatalog(coll);
    });
    op.events.push({ op: 'drop', db, coll: name });
    return coll;
  }

  dropDatabase(op: OpContext, db: string): void {
    const colls = this.dbs.get(db);
    if (!colls) return;
    this.checkRefused(op);
    for (const name of colls.keys()) op.events.push({ op: 'drop', db, coll: name });
    this.dbs.delete(db);
    op.ops.push({ o: 'dd', db });
    this.remember(op, () => {
      if (!this.dbs.has(db)) this.dbs.set(db, colls);
    });
    op.events.push({ op: 'dropDatabase', db });
  }

  createIndex(op: OpContext, coll: Collection, spec: IndexSpec): void {
    this.checkRefused(op);
    const index = coll.createIndex(spec);
    op.ops.push({ o: 'ci', db: coll.db, c: coll.name, spec });
    this.remember(op, () => {
      if (coll.indexes.get(spec.name) === index) coll.indexes.delete(spec.name);
    });
  }

  dropIndex(op: OpContext, coll: Collection, name: string): void {
    this.checkRefused(op);
    const index = coll.indexes.get(name);
    coll.dropIndex(name);
    op.ops.push({ o: 'di', db: coll.db, c: coll.name, name });
    // Put back as it was: the writes since, undone first, left its documents as they were at the drop.
    this.remember(op, () => {
      if (index && !coll.indexes.has(name)) coll.indexes.set(name, index);
    });
  }

  // --- document writes (synchronous; throw before changing anything) ---

  insertDoc(op: OpContext, coll: Collection, doc: Doc): void {
    this.checkRefused(op);
    const id = canonicalKey(doc._id);
    this.txns.checkUnlocked(op.txn, coll, id);
    coll.insert(doc);
    this.record(op, coll, id, undefined, doc, 'insert');
  }

  replaceDoc(op: OpContext, coll: Collection, before: Doc, after: Doc, kind: 'update' | 'replace'): void {
    this.checkRefused(op);
    const id = canonicalKey(before._id);
    this.txns.checkUnlocked(op.txn, coll, id);
    coll.replace(id, before, after);
    this.record(op, coll, id, before, after, kind);
  }

  deleteDoc(op: OpContext, coll: Collection, before: Doc): void {
    this.checkRefused(op);
    const id = canonicalKey(before._id);
    this.txns.checkUnlocked(op.txn, coll, id);
    coll.delete(id);
    this.record(op, coll, id, before, undefined, 'delete');
  }

  /** Throws WaitForTransaction if any of these documents is held by another transaction. */
  checkUnlocked(op: OpContext, coll: Collection, docs: Doc[]): void {
    if (!this.txns.lockHolder) return;
    for (const d of docs) this.txns.checkUnlocked(op.txn, coll, canonicalKey(d._id));
  }

  private record(
    op: OpContext,
    coll: Collection,
    id: string,
    before: Doc | undefined,
    after: Doc | undefined,
    kind: 'insert' | 'update' | 'replace' | 'delete',
  ): void {
    const draft: ChangeDraft = { op: kind, db: coll.db, coll: coll.name, id: (after ?? before)!._id, before, after };
    if (op.txn) {
      op.txn.recordTouch(coll, id, before);
      draft.lsid = op.txn.lsid;
      draft.txnNumber = op.txn.txnNumber;
      op.txn.events.push(draft);
      return;
    }
    const written = after ? coll.stored(id)! : undefined;
    op.ops.push(written ? { o: 'put', db: coll.db, c: coll.name, doc: written } : { o: 'del', db: coll.db, c: coll.name, id: before!._id });
    op.events.push(draft);
    // Taken back only while the document is still this write's version (stored bytes are never reused).
    this.remember(op, () => {
      if (written ? coll.stored(id) !== written : coll.get(id) !== undefined) return;
      if (before) coll.forcePut(before);
      else coll.delete(id);
    });
  }

  /** Keeps how to take back a change just applied in memory, until its journal record lands. */
  private remember(op: OpContext, run: () => void): void {
    if (!this.files || op.txn) return; // memory mode journals nothing; a transaction keeps its own undo images
    op.undo.push({ seq: ++this.changeSeq, run });
    this.unjournaled.add(op);
  }

  private checkRefused(op: OpContext): void {
    if (op.refused) throw op.refused;
  }

  /**
   * The journal could not write (`error`): every change applied in memory and not journaled is taken
   * back, newest first across all commands, and each command that made one is refused, including
   * commands still running (their later statements throw; their record is never appended). Called by
   * the journal synchronously, before any waiter hears of the failure, so no command runs in between.
   */
  private refuseUnjournaled(error: Error, retryable: boolean): void {
    const refusal = journalRefusal(error, retryable);
    const steps: UndoStep[] = [];
    for (const op of this.unjournaled) {
      op.refused = refusal;
      steps.push(...op.undo);
      op.undo.length = 0;
    }
    this.unjournaled.clear();
    steps.sort((a, b) => b.seq - a.seq);
    for (const step of steps) {
      try {
        step.run();
      } catch (e) {
        this.logger('embedded db: could not take back a write the journal refused', { error: String(e) });
      }
    }
    this.logger('embedded db: the journal refused a write; unjournaled changes taken back', {
      error: error.message,
      changes: steps.length,
      retryable,
    });
  }

  private removeFromCatalog(db: string, name: string): void {
    const colls = this.dbs.get(db);
    colls?.delete(name);
    if (colls?.size === 0) this.dbs.delete(db);
  }

  private addToCatalog(coll: Collection): void {
    let colls = this.dbs.get(coll.db);
    if (!colls) this.dbs.set(coll.db, (colls = new Map()));
    colls.set(coll.name, coll);
  }

  /**
   * Makes a command's non-transactional changes durable, then publishes its change events.
   * `acknowledge: 'applied'` (a write concern of `{ w: 1 }` without `j: true`, see writeAcknowledgement)
   * answers once the changes are applied, as a MongoDB primary does: the journal write goes on and the
   * change events are published when it lands, so a change stream still only carries durable changes,
   * in journal order. A later write's durability implies this one's (the journal is appended in order).
   */
  async finish(op: OpContext, acknowledge: 'durable' | 'applied' = 'durable'): Promise<void> {
    if (op.refused) throw op.refused; // its changes were taken back: nothing to append
    const appended = op.ops.length ? this.journal.append(op.ops) : undefined;
    const landed = appended && op.undo.length ? appended.then(() => this.journaled(op)) : appended;
    // Refused at once (the pause after a full disk, or a failed journal): its changes were just taken
    // back, so even a write acknowledged when applied is answered with the refusal, never with success.
    if (op.refused) {
      landed?.catch(() => undefined);
      throw op.refused;
    }
    if (acknowledge === 'applied' && landed) {
      const events = op.events;
      // A refused append took this write back and said so in the log; it was answered already.
      landed.then(() => events.length && this.changes.publish(events)).catch(() => undefined);
      return;
    }
    if (landed) {
      try {
        await landed;
      } catch (e) {
        throw op.refused ?? e;
      }
    }
    if (op.events.length) this.changes.publish(op.events);
  }

  /** `op`'s record is on disk: its changes are no longer anyone's to take back. */
  private journaled(op: OpContext): void {
    op.undo.length = 0;
    this.unjournaled.delete(op);
  }

  /** Runs a write step, waiting and retrying while a transaction holds one of its documents. */
  async retryLocked<T>(fn: () => T): Promise<T> {
    for (;;) {
      try {
        return fn();
      } catch (e) {
        if (!(e instanceof WaitForTransaction)) throw e;
        await e.txn.done;
      }
    }
  }

  async commitTransaction(txn: Transaction): Promise<void> {
    if (txn.state === 'committed') return;
    if (txn.state === 'aborted') {
      throw new MongoCommandError(ErrorCodes.NoSuchTransaction, `Transaction ${txn.txnNumber} has been aborted.`, {
        errorLabels: ['TransientTransactionError'],
      });
    }
    txn.committing = true;
    const ops: JournalOp[] = [];
    for (const t of txn.touched.values()) {
      if (this.getCollection(t.coll.db, t.coll.name) !== t.coll) continue; // dropped meanwhile
      const cur = t.coll.stored(t.id);
      if (cur) ops.push({ o: 'put', db: t.coll.db, c: t.coll.name, doc: cur });
      else if (t.before) ops.push({ o: 'del', db: t.coll.db, c: t.coll.name, id: t.before._id });
    }
    try {
      if (ops.length) await this.journal.append(ops);
    } catch (e) {
      txn.committing = false;
      this.txns.abort(txn);
      throw e instanceof Error && isJournalError(e) ? journalRefusal(e, isOutOfSpace(e)) : e;
    }
    this.changes.publish(txn.events);
    txn.finish('committed');
    this.txns.release(txn);
  }

  abortTransaction(txn: Transaction): void {
    this.txns.abort(txn);
  }

  // --- recovery and snapshots ---

  /** `file`, `pos`: where a put's document lies in the data files (it is read from there, not kept). */
  private applyOp(op: JournalOp, file: number, pos: number): void {
    switch (op.o) {
      case 'put': {
        let coll = this.getCollection(op.db, op.c);
        if (!coll) coll = this.ensureCollection(new OpContext(op.db, undefined), op.db, op.c);
        if (this.loading) coll.loadPut(op.doc, file, pos);
        else coll.forcePut(decodeDoc(op.doc));
        return;
      }
      case 'del':
        if (this.loading) this.getCollection(op.db, op.c)?.loadDelete(canonicalKey(op.id));
        else this.getCollection(op.db, op.c)?.delete(canonicalKey(op.id));
        return;
      case 'cc':
        if (!this.getCollection(op.db, op.c)) {
          const coll = new Collection(op.db, op.c, op.opts ?? {}, op.uuid instanceof Binary ? op.uuid : undefined, this.files);
          let colls = this.dbs.get(op.db);
          if (!colls) this.dbs.set(op.db, (colls = new Map()));
          colls.set(op.c, coll);
        }
        return;
      case 'dc':
        this.dbs.get(op.db)?.delete(op.c);
        return;
      case 'dd':
        this.dbs.delete(op.db);
        return;
      case 'ci': {
        const coll = this.getCollection(op.db, op.c);
        if (coll && this.loading) coll.declareIndex(op.spec);
        else if (coll && !coll.indexes.has(op.spec.name)) {
          try {
            coll.createIndex(op.spec);
          } catch (e) {
            this.logger('embedded db: could not rebuild index during recovery', { index: op.spec.name, error: String(e) });
          }
        }
        return;
      }
      case 'di':
        this.getCollection(op.db, op.c)?.indexes.delete(op.name);
        return;
    }
  }

  /** Consistent copy of the committed state for a snapshot (undefined while a txn has changes). */
  private capture(): SnapshotCollection[] | undefined {
    const holder = this.txns.lockHolder;
    if (holder && holder.touched.size > 0) return undefined;
    const out: SnapshotCollection[] = [];
    for (const colls of this.dbs.values()) {
      for (const c of colls.values()) {
        out.push({
          db: c.db,
          name: c.name,
          options: c.options,
          uuid: c.uuid,
          indexes: [...c.indexes.values()].filter((i) => !i.isId).map((i) => i.spec),
          docs: c.captureDocs(),
        });
      }
    }
    return out;
  }
}

function isJournalError(e: Error): boolean {
  return typeof (e as NodeJS.ErrnoException).code === 'string' || e.message === 'journal closed';
}

/**
 * What a refused write is answered with. A full disk is MongoDB's OutOfDiskSpace (14031), which
 * clients treat as "cannot write now, retry later"; any other journal failure refuses writes until a
 * restart (the journal cannot tell what reached the disk) and says so.
 */
function journalRefusal(error: Error, retryable: boolean): MongoCommandError {
  if (retryable) {
    return new MongoCommandError(
      ErrorCodes.OutOfDiskSpace,
      `embedded db: the data directory's disk is full (${error.message}); this write was not applied. Writes are accepted again as soon as space is freed.`,
    );
  }
  return new MongoCommandError(
    ErrorCodes.OperationFailed,
    `embedded db: the journal cannot be written (${error.message}); this write was not applied, and writes are refused until the engine is restarted.`,
  );
}

function validateNamespace(db: string, name: string): void {
  if (!db || /[/\\. "$\0]/.test(db)) {
    throw new MongoCommandError(ErrorCodes.InvalidNamespace, `Invalid database name: '${db}'`);
  }
  if (!name || name.includes('$') || name.includes('\0') || name.startsWith('.') || name.startsWith('system.')) {
    throw new MongoCommandError(ErrorCodes.InvalidNamespace, `Invalid collection name: ${name}`);
  }
}
