/**
 * TTL expiry, as mongod's TTL monitor does it: every `intervalMs` (mongod: `ttlMonitorSleepSecs`, 60 s)
 * each index with a numeric `expireAfterSeconds` on a single field deletes the documents whose indexed
 * date is older than now - expireAfterSeconds. Only dates expire (a document whose field is missing, null
 * or not a date stays; for an array of dates the earliest counts), partial TTL indexes only hold the
 * documents of their filter, and compound indexes never expire anything (mongod ignores the option there).
 *
 * The expired documents are found by a range scan of the TTL index itself, never by a collection scan,
 * and deleted in batches of `batchSize`: each batch is one write like a `delete` command's (journaled,
 * published as change events), and the monitor yields between batches so commands keep being served.
 * A pass stops after `maxPerIndex` deletes per index; the next pass takes the rest. A document that an
 * open transaction holds is left for the next pass rather than waited for.
 */
import { OpContext, type Engine } from './engine';
import type { Collection } from './collection';
import type { Bound, Index } from './indexes';
import { WaitForTransaction } from './transactions';

export interface TtlOptions {
  /** Time between passes. Default 60 000 ms (mongod's default). */
  intervalMs?: number;
  /** Documents deleted per write. Default 1 000. */
  batchSize?: number;
  /** Deletes per index and pass. Default 50 000. */
  maxPerIndex?: number;
}

/** The earliest date a BSON date can hold: the scan's lower bound, so no non-date value is read. */
const MIN_DATE = new Date(-8.64e15);

export class TtlMonitor {
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<number> | undefined;
  private stopped = false;
  private readonly intervalMs: number;
  private readonly batchSize: number;
  private readonly maxPerIndex: number;

  constructor(
    private readonly engine: Engine,
    opts: TtlOptions = {},
  ) {
    this.intervalMs = opts.intervalMs ?? 60_000;
    this.batchSize = opts.batchSize ?? 1_000;
    this.maxPerIndex = opts.maxPerIndex ?? 50_000;
  }

  start(): this {
    this.schedule();
    return this;
  }

  /** Stops the timer and waits for a pass under way (which ends after its current batch). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.pass;
  }

  /** One pass over every TTL index; resolves to the number of documents deleted. */
  runOnce(now = Date.now()): Promise<number> {
    this.pass ??= this.expireAll(now).finally(() => (this.pass = undefined));
    return this.pass;
  }

  private schedule(): void {
    if (this.stopped) return;
    // A pass that overruns delays the next one rather than overlapping it (as mongod's monitor sleeps after each pass).
    this.timer = setTimeout(() => {
      this.runOnce()
        .catch((e: unknown) => this.engine.logger('embedded db: TTL pass failed', { error: String(e) }))
        .finally(() => this.schedule());
    }, this.intervalMs);
    this.timer.unref();
  }

  private async expireAll(now: number): Promise<number> {
    let total = 0;
    // Collections and indexes are listed first: the catalog may change while batches are awaited.
    const targets: Array<{ db: string; coll: string; index: string }> = [];
    for (const [db, colls] of this.engine.dbs) {
      for (const [name, coll] of colls) {
        for (const idx of coll.indexes.values()) if (ttlSeconds(idx) !== undefined) targets.push({ db, coll: name, index: idx.name });
      }
    }
    for (const t of targets) {
      let deleted = 0;
      while (!this.stopped && deleted < this.maxPerIndex) {
        const coll = this.engine.getCollection(t.db, t.coll);
        const idx = coll?.indexes.get(t.index);
        const seconds = idx && ttlSeconds(idx);
        if (!coll || !idx || seconds === undefined) break;
        const n = await this.deleteBatch(coll, idx, now - seconds * 1_000, Math.min(this.batchSize, this.maxPerIndex - deleted));
        deleted += n.deleted;
        // Nothing left, or only documents that transactions hold: the next pass retries those.
        if (n.scanned < this.batchSize || n.deleted === 0) break;
        await new Promise((r) => setImmediate(r));
      }
      total += deleted;
    }
    return total;
  }

  /**
   * Deletes up to `limit` documents whose indexed date is before `cutoff` (ms), found by a range scan of
   * the index. Returns how many it deleted and how many it looked at (fewer than `limit`: nothing left).
   */
  private async deleteBatch(coll: Collection, idx: Index, cutoff: number, limit: number): Promise<{ deleted: number; scanned: number }> {
    const lo: Bound = { value: MIN_DATE, inclusive: true };
    const hi: Bound = { value: new Date(cutoff), inclusive: false };
    // Ids first, then deletes: deleting while walking the index would move the walk under its feet.
    const ids = new Set<string>();
    for (const e of idx.scanRange(lo, hi)) {
      ids.add(e.id);
      if (ids.size >= limit) break;
    }
    const op = new OpContext(coll.db, undefined);
    let deleted = 0;
    for (const id of ids) {
      const doc = coll.get(id);
      if (!doc) continue;
      try {
        this.engine.deleteDoc(op, coll, doc);
        deleted++;
      } catch (e) {
        if (!(e instanceof WaitForTransaction)) throw e;
      }
    }
    await this.engine.finish(op);
    return { deleted, scanned: ids.size };
  }
}

/** expireAfterSeconds of a TTL index, or undefined for any other index (compound, _id, not a number). */
function ttlSeconds(idx: Index): number | undefined {
  const s = idx.spec.expireAfterSeconds;
  if (typeof s !== 'number' || !Number.isFinite(s) || s < 0 || idx.fields.length !== 1 || idx.isId) return undefined;
  return s;
}
