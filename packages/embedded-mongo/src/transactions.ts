/**
 * Sessions and multi-document transactions.
 *
 * Transactions are serialised: a transaction takes the global transaction lock at its first
 * write and keeps it until commit/abort; other transactions queue for it. Its writes are applied
 * in place (so it reads its own writes) with the first-seen version of every touched document
 * kept as an undo image. Abort puts those images back, which touches nothing else. Writes outside
 * transactions are never blocked unless they target a document the open transaction touched; then
 * they wait for it to finish (as MongoDB does). The journal and change streams only see a
 * transaction's effects at commit, as one record.
 */
import { ErrorCodes, MongoCommandError } from './errors';
import type { Collection } from './collection';
import type { ChangeDraft } from './changeStreams';
import { isPlainObject, type Doc } from './values';

export type TxnState = 'active' | 'committed' | 'aborted';

export interface Touched {
  coll: Collection;
  id: string;
  before: Doc | undefined;
}

export class Transaction {
  state: TxnState = 'active';
  readonly touched = new Map<string, Touched>();
  readonly events: ChangeDraft[] = [];
  holdsLock = false;
  committing = false;
  /** Connection that carried the latest command of this transaction (see connectionClosed). */
  lastConnection = -1;
  timer: NodeJS.Timeout | undefined;
  private resolveDone!: () => void;
  /** Settles when the transaction commits or aborts. */
  readonly done: Promise<void> = new Promise((r) => (this.resolveDone = r));

  constructor(
    readonly sessionKey: string,
    readonly txnNumber: number,
    readonly lsid: unknown,
  ) {}

  finish(state: 'committed' | 'aborted'): void {
    this.state = state;
    if (this.timer) clearTimeout(this.timer);
    this.resolveDone();
  }

  touches(coll: Collection, id: string): boolean {
    return this.touched.has(`${coll.ns}\u0000${id}`);
  }

  recordTouch(coll: Collection, id: string, before: Doc | undefined): void {
    const k = `${coll.ns}\u0000${id}`;
    if (!this.touched.has(k)) this.touched.set(k, { coll, id, before });
  }
}

interface Session {
  key: string;
  txn: Transaction | undefined;
}

/** Thrown (before any change is made) when a write must wait for another transaction. */
export class WaitForTransaction extends Error {
  constructor(readonly txn: Transaction) {
    super('document is locked by a transaction');
  }
}

function noSuchTransaction(n: number): MongoCommandError {
  return new MongoCommandError(ErrorCodes.NoSuchTransaction, `Transaction with { txnNumber: ${n} } has been aborted.`, {
    errorLabels: ['TransientTransactionError'],
  });
}

export function sessionKeyOf(lsid: unknown): string | undefined {
  if (!isPlainObject(lsid)) return undefined;
  const id = lsid.id as { toString(enc?: string): string } | undefined;
  if (!id) return undefined;
  const bin = id as unknown as { buffer?: Uint8Array; toHexString?: () => string };
  if (bin.buffer instanceof Uint8Array) return Buffer.from(bin.buffer).toString('hex');
  return String(id);
}

export class TransactionManager {
  private sessions = new Map<string, Session>();
  private holder: Transaction | undefined;
  private queue: Array<{ txn: Transaction; grant: () => void }> = [];

  constructor(
    private readonly lifetimeMs: number,
    private readonly onTimeout: (txn: Transaction) => void,
  ) {}

  get lockHolder(): Transaction | undefined {
    return this.holder;
  }

  /**
   * The transaction a command runs in, creating it on startTransaction. Returns undefined
   * for commands outside a transaction (including retryable writes, which carry txnNumber
   * but no autocommit:false).
   */
  resolve(cmd: Doc, commandName: string): Transaction | undefined {
    if (cmd.autocommit !== false) return undefined;
    const key = sessionKeyOf(cmd.lsid);
    if (!key) throw new MongoCommandError(ErrorCodes.InvalidOptions, 'Transactions require a session (lsid)');
    const n = Number(cmd.txnNumber ?? 0);
    let session = this.sessions.get(key);
    if (!session) {
      session = { key, txn: undefined };
      this.sessions.set(key, session);
    }
    if (cmd.startTransaction === true) {
      if (session.txn && session.txn.state === 'active') {
        if (session.txn.txnNumber === n) {
          throw new MongoCommandError(ErrorCodes.OperationFailed, `Transaction ${n} already in progress`);
        }
        this.abort(session.txn);
      }
      const txn = new Transaction(key, n, cmd.lsid);
      txn.timer = setTimeout(() => this.onTimeout(txn), this.lifetimeMs);
      txn.timer.unref();
      session.txn = txn;
      return txn;
    }
    const txn = session.txn;
    if (!txn || txn.txnNumber !== n) throw noSuchTransaction(n);
    if (txn.state === 'aborted') throw noSuchTransaction(n);
    if (txn.state === 'committed' && commandName !== 'commitTransaction' && commandName !== 'abortTransaction') {
      throw new MongoCommandError(256, `Transaction ${n} has been committed.`);
    }
    return txn;
  }

  /** Waits for the global transaction write lock. */
  async acquire(txn: Transaction): Promise<void> {
    if (txn.holdsLock) return;
    if (this.holder === undefined) {
      this.holder = txn;
      txn.holdsLock = true;
      return;
    }
    await new Promise<void>((grant) => this.queue.push({ txn, grant }));
    if (txn.state !== 'active') {
      this.release(txn);
      throw noSuchTransaction(txn.txnNumber);
    }
  }

  release(txn: Transaction): void {
    if (this.holder !== txn) return;
    txn.holdsLock = false;
    this.holder = undefined;
    const next = this.queue.shift();
    if (next) {
      this.holder = next.txn;
      next.txn.holdsLock = true;
      next.grant();
    }
  }

  /** Undo every change of the transaction, newest first. */
  abort(txn: Transaction): void {
    if (txn.state !== 'active') return;
    const entries = [...txn.touched.values()].reverse();
    for (const t of entries) {
      const cur = t.coll.get(t.id);
      if (t.before === undefined) {
        if (cur) t.coll.delete(t.id);
      } else t.coll.forcePut(t.before);
    }
    txn.touched.clear();
    txn.events.length = 0;
    txn.finish('aborted');
    this.release(txn);
    // A queued (lock-waiting) transaction leaves the queue when aborted.
    this.queue = this.queue.filter((q) => {
      if (q.txn === txn) q.grant();
      return q.txn !== txn;
    });
  }

  /** Ends sessions (endSessions / idle): aborts their open transactions. */
  endSession(lsid: unknown): void {
    const key = sessionKeyOf(lsid);
    if (!key) return;
    const s = this.sessions.get(key);
    if (s?.txn && s.txn.state === 'active' && !s.txn.committing) this.abort(s.txn);
    this.sessions.delete(key);
  }

  /**
   * A client that dies in the middle of a transaction would otherwise hold the global transaction
   * lock until the lifetime limit. When the connection that carried a transaction's latest
   * command goes away, abort it: a live client that really continues on another pooled connection
   * gets NoSuchTransaction (TransientTransactionError), which withTransaction() retries.
   */
  connectionClosed(connectionId: number): void {
    for (const s of this.sessions.values()) {
      const t = s.txn;
      if (t && t.state === 'active' && !t.committing && t.lastConnection === connectionId) this.abort(t);
    }
  }

  abortAll(): void {
    for (const s of this.sessions.values()) if (s.txn?.state === 'active') this.abort(s.txn);
  }

  /** Throws WaitForTransaction if another transaction holds this document. */
  checkUnlocked(current: Transaction | undefined, coll: Collection, id: string): void {
    const h = this.holder;
    if (h && h !== current && h.touches(coll, id)) throw new WaitForTransaction(h);
  }
}
