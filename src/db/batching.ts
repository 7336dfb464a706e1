import type { mongo } from 'mongoose';
import { driverCollection } from './driverCollection';
import { CommandDeadlineError } from './unavailable';
import { DATABASE_WAIT_MS, writeConcernFor, type Acknowledge } from './writeConcern';

/**
 * Coalesces the operations concurrent requests issue in one turn of the event loop into one command per kind
 * (inserts, reads by `_id`, updates): a command costs the gateway about the same CPU whatever it carries
 * (figures: bench/README.md, "Figures quoted in source comments"). Each document is still written atomically
 * and acknowledged after its command; never use these inside a transaction. More:
 * docs/decisions/notes/storage.md, "Batched commands".
 */
export type Outcome<O> = { ok: true; value: O } | { ok: false; error: unknown };

/** Commands in flight per batcher (per collection and kind of operation). */
const MAX_IN_FLIGHT = 2;

/**
 * How long a batch's command may go unanswered before its callers are told the database is unavailable
 * (503) and its place in flight is given to the next batch: the server selection's wait, and half a second
 * for the command itself (given up DEADLINE_SWEEP_MS later at most: within the 5 s in which a client must
 * hear that the service is unavailable). The driver bounds server selection, not a command written on a
 * connection whose peer is gone unnoticed (a network partition; or, seen in
 * test/faults/databaseOutage.fault.ts about once in five runs on a loaded machine, a rate-limit count sent
 * on a pooled connection in the instant its engine was SIGKILLed, neither answered nor failed): its
 * request waited for ever, and two such commands would have held every later one of their batcher. A
 * late answer is dropped; what the command wrote stands, as after any lost reply (a retry with the same
 * Idempotency-Key finds it).
 */
export const COMMAND_DEADLINE_MS = DATABASE_WAIT_MS + 500;

/**
 * Sends every batch still waiting (those with a window go out now) and waits until no command is in
 * flight, `withinMs` at most: called before the database connection closes at a graceful stop, so that
 * the writes nobody awaits (hooks-done marks, the overview's counters) are not dropped with it.
 */
export async function flushAllBatches(withinMs = 3_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    for (const b of everyBatcher) b.sendNow();
    if ([...everyBatcher].every((b) => b.idle) || Date.now() > deadline) return;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Every batcher of the process, whoever made it (the per-collection ones below, the rate limiter's
 * counts in domain/ratelimit/countBatch.ts, the event sequences' allocations), so that flushAllBatches
 * reaches them all. Batchers are made once per kind and live as long as the process: the set does not
 * grow with traffic.
 */
// eslint-disable-next-line no-restricted-syntax -- the batchers of mongoose's one connection, flushed before it closes
const everyBatcher = new Set<Batcher<any, any>>();

type Waiter<I, O> = { item: I; resolve: (o: O) => void; reject: (e: unknown) => void };

/** A batch's command in flight: settled once, by its outcome or by its deadline, whichever comes first. */
interface Flight<I, O> {
  batch: Array<Waiter<I, O>>;
  /** performance.now() past which it is given up. */
  deadline: number;
  settled: boolean;
}

export class Batcher<I, O> {
  private pending: Array<Waiter<I, O>> = [];
  private scheduled = false;
  private readonly flights = new Set<Flight<I, O>>();

  get idle(): boolean {
    return this.pending.length === 0 && this.flights.size === 0;
  }

  /** Gives up the commands in flight past their deadline (CommandDeadlineError to their callers). */
  expire(now: number): void {
    for (const flight of this.flights) if (flight.deadline <= now) this.settle(flight, undefined, new CommandDeadlineError(this.deadlineMs));
  }

  /** What waits goes out now (as far as the commands in flight allow), its window or turn not awaited. */
  sendNow(): void {
    this.drain();
  }

  /**
   * `maxInFlight`: commands of this batcher outstanding at once. While they are, new items wait and
   * go out together as soon as one returns (group commit): no delay when idle, bigger batches under load.
   */
  constructor(
    private readonly flush: (items: I[]) => Promise<Array<Outcome<O>>>,
    private readonly maxBatch = 500,
    private readonly maxInFlight = MAX_IN_FLIGHT,
    /**
     * 0: a batch goes out at the end of the turn its first item arrived in. More: it waits that many ms
     * for more items, for bookkeeping that nobody waits on (see updateByIdBatched).
     */
    private readonly windowMs = 0,
    /** COMMAND_DEADLINE_MS; shorter in tests. */
    private readonly deadlineMs = COMMAND_DEADLINE_MS,
  ) {
    everyBatcher.add(this);
  }

  run(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= this.maxBatch) {
        this.drain();
      } else if (!this.scheduled) {
        this.scheduled = true;
        const go = () => {
          this.scheduled = false;
          this.drain();
        };
        // setImmediate, not nextTick: every I/O callback of this loop turn gets to add to the batch.
        if (this.windowMs > 0) setTimeout(go, this.windowMs);
        else setImmediate(go);
      }
    });
  }

  private drain(): void {
    if (this.pending.length === 0) return;
    if (this.flights.size >= this.maxInFlight && this.pending.length < this.maxBatch) return; // sent when one returns
    const flight: Flight<I, O> = { batch: this.pending.splice(0, this.maxBatch), deadline: performance.now() + this.deadlineMs, settled: false };
    this.flights.add(flight);
    watchDeadlines();
    this.flush(flight.batch.map((b) => b.item)).then(
      (outcomes) => this.settle(flight, outcomes),
      (err: unknown) => this.settle(flight, undefined, err),
    );
  }

  private settle(flight: Flight<I, O>, outcomes: Array<Outcome<O>> | undefined, err?: unknown): void {
    if (flight.settled) return;
    flight.settled = true;
    this.flights.delete(flight);
    flight.batch.forEach((b, i) => {
      const o = outcomes?.[i];
      if (!outcomes) b.reject(err);
      else if (!o) b.reject(new Error('batched operation lost its result'));
      else if (o.ok) b.resolve(o.value);
      else b.reject(o.error);
    });
    this.drain();
  }
}

/**
 * One timer for every batcher's deadlines, not one per command (a command costs a request a few µs; a
 * timer and a race per command would add to it): while anything is in flight, each batcher gives up what
 * is past its deadline, DEADLINE_SWEEP_MS late at most.
 */
const DEADLINE_SWEEP_MS = 200;
// eslint-disable-next-line no-restricted-syntax -- the one sweep of every batcher's deadlines, running while a command is in flight
let deadlineSweep: NodeJS.Timeout | null = null;

function watchDeadlines(): void {
  if (deadlineSweep) return;
  deadlineSweep = setInterval(() => {
    const now = performance.now();
    let busy = false;
    for (const b of everyBatcher) {
      b.expire(now);
      if (!b.idle) busy = true;
    }
    if (!busy && deadlineSweep) {
      clearInterval(deadlineSweep);
      deadlineSweep = null;
    }
  }, DEADLINE_SWEEP_MS);
  deadlineSweep.unref();
}

/** A mongoose model (its driver collection is used directly, below mongoose's document layer). */
export interface ModelLike {
  collection: { collectionName: string };
  db: { db?: mongo.Db };
}

function database(model: ModelLike): mongo.Db {
  const db = model.db.db;
  if (!db) throw new Error('database not connected');
  return db;
}

/** One batcher per collection (and projection); the collection is looked up at flush time, so a reconnect is fine. */
// eslint-disable-next-line no-restricted-syntax -- one batcher per collection of mongoose's one connection: its gateways share a batch
const batchers = new Map<string, Batcher<any, any>>();

function batcherFor<I, O>(key: string, make: () => Batcher<I, O>): Batcher<I, O> {
  let b = batchers.get(key) as Batcher<I, O> | undefined;
  if (!b) {
    b = make();
    batchers.set(key, b);
  }
  return b;
}

interface WriteErrorLike {
  index: number;
  code?: number;
  errmsg?: string;
  errInfo?: unknown;
  keyPattern?: unknown;
  keyValue?: unknown;
}

interface WriteReply {
  ok?: number;
  writeErrors?: WriteErrorLike[];
  writeConcernError?: { code?: number; errmsg?: string };
  /** Statements of an `update` that inserted (upserts that matched nothing). */
  upserted?: Array<{ index: number; _id: unknown }>;
}

/**
 * Runs an unordered `insert` / `update` command. The raw command rather than insertMany/bulkWrite:
 * the driver's bulk machinery cost more than the command itself. A write error fails its own statement
 * only (code, message, keyPattern and keyValue as a single write would report them). The write concern
 * is the command's own: a raw command does not take the client's default (writeConcern.ts).
 */
async function perStatement(model: ModelLike, command: Record<string, unknown>, count: number, ack: Acknowledge = 'durable'): Promise<Array<Outcome<void>>> {
  const reply = await writeCommand(model, command, ack);
  const failed = new Map((reply.writeErrors ?? []).map((we) => [we.index, writeError(we)]));
  return Array.from({ length: count }, (_v, i) => {
    const e = failed.get(i);
    return e ? { ok: false as const, error: e } : { ok: true as const, value: undefined };
  });
}

/** Sends a write command with the gateway's write concern; a write concern error fails the whole batch. */
async function writeCommand(model: ModelLike, command: Record<string, unknown>, ack: Acknowledge = 'durable'): Promise<WriteReply> {
  const reply = (await database(model).command({ ...command, writeConcern: writeConcernFor(ack) })) as WriteReply;
  if (reply.writeConcernError) {
    throw Object.assign(new Error(reply.writeConcernError.errmsg ?? 'write concern error'), { code: reply.writeConcernError.code });
  }
  return reply;
}

/** One statement's error as a single write would report it. */
function writeError(we: WriteErrorLike): Error {
  return Object.assign(new Error(we.errmsg ?? 'write failed'), { code: we.code, errInfo: we.errInfo, keyPattern: we.keyPattern, keyValue: we.keyValue });
}

/** Inserts one document (which carries its own `_id`). Rejects with `code: 11000` on a duplicate key. */
export function insertBatched<T extends { _id: unknown }>(model: ModelLike, doc: T, ack: Acknowledge = 'durable'): Promise<void> {
  const name = model.collection.collectionName;
  const batcher = batcherFor<T, void>(`insert:${name}:${ack}`, () =>
    new Batcher<T, void>((docs) => perStatement(model, { insert: name, documents: docs, ordered: false }, docs.length, ack)),
  );
  return batcher.run(doc);
}

/** Reads one document by `_id` (null when absent). All reads of one batch share `projection`. */
export function findByIdBatched<T>(model: ModelLike, id: string, projection?: Record<string, 0 | 1>): Promise<T | null> {
  const key = `find:${model.collection.collectionName}:${projection ? JSON.stringify(projection) : ''}`;
  const batcher = batcherFor<string, T | null>(key, () =>
    new Batcher<string, T | null>(async (ids) => {
      const unique = [...new Set(ids)];
      const filter = unique.length === 1 ? { _id: unique[0] } : { _id: { $in: unique } };
      const docs = (await driverCollection<any>(model).find(filter as never, projection ? { projection } : {}).toArray()) as Array<T & { _id: string }>;
      const byId = new Map(docs.map((d) => [d._id, d]));
      return ids.map((id) => ({ ok: true as const, value: byId.get(id) ?? null }));
    }),
  );
  return batcher.run(id);
}

/**
 * Documents whose `field` equals `value` (for small sets such as an account's webhook endpoints or a
 * payment's events), with only the `projection`'s fields when one is given.
 */
export function findByFieldBatched<T>(model: ModelLike, field: string, value: string, projection?: Record<string, 0 | 1>): Promise<T[]> {
  const key = `findBy:${model.collection.collectionName}:${field}:${projection ? JSON.stringify(projection) : ''}`;
  const batcher = batcherFor<string, T[]>(key, () =>
    new Batcher<string, T[]>(async (values) => {
      const unique = [...new Set(values)];
      const filter = unique.length === 1 ? { [field]: unique[0] } : { [field]: { $in: unique } };
      const docs = (await driverCollection<any>(model).find(filter as never, projection ? { projection } : {}).toArray()) as Array<T & Record<string, unknown>>;
      const groups = new Map<string, T[]>();
      for (const d of docs) {
        const k = d[field] as string;
        const group = groups.get(k);
        if (group) group.push(d);
        else groups.set(k, [d]);
      }
      // Callers of the same value share one array: they must not change it.
      return values.map((v) => ({ ok: true as const, value: groups.get(v) ?? [] }));
    }),
  );
  return batcher.run(value);
}

/**
 * Applies an update to at most one document. The batch is one unordered `update` command, whose
 * reply carries totals only: use this where the caller does not need to know whether its filter
 * matched (bookkeeping such as clearing an outbox), never for a conditional write that decides.
 * `update` may be a pipeline (standard MongoDB 4.2+), for a write that decides on the stored document.
 * `upsert`: a filter that matches nothing inserts (counters that start at zero, such as `$inc`).
 */
export function updateOneBatched(
  model: ModelLike,
  filter: Record<string, unknown>,
  update: Record<string, unknown> | Array<Record<string, unknown>>,
  ack: Acknowledge = 'durable',
  upsert = false,
): Promise<void> {
  const name = model.collection.collectionName;
  const batcher = batcherFor<{ filter: Record<string, unknown>; update: Record<string, unknown> | Array<Record<string, unknown>> }, void>(`update:${name}:${ack}:${upsert}`, () =>
    new Batcher((ops) => perStatement(model, { update: name, updates: ops.map((op) => ({ q: op.filter, u: op.update, ...(upsert && { upsert }) })), ordered: false }, ops.length, ack)),
  );
  return batcher.run({ filter, update });
}

/**
 * A conditional write that says whether it applied, batched like the others. The `update` reply carries
 * totals only, so each statement is an upsert whose insert cannot happen: `$setOnInsert` gives it another
 * `_id` than the filter's, which MongoDB refuses (ImmutableField), so a miss fails its own statement and
 * inserts nothing, whether the document changed or is gone (deleted). Hence `filter` names the `_id`.
 * More: docs/decisions/notes/storage.md, "updateIfMatchBatched".
 */
export function updateIfMatchBatched(model: ModelLike, filter: { _id: string } & Record<string, unknown>, update: Record<string, unknown>): Promise<boolean> {
  if ('$setOnInsert' in update) throw new Error('updateIfMatchBatched: the update takes no $setOnInsert (it marks a miss)');
  const name = model.collection.collectionName;
  type Op = { filter: Record<string, unknown>; update: Record<string, unknown> };
  const batcher = batcherFor<Op, boolean>(`updateIfMatch:${name}`, () =>
    new Batcher<Op, boolean>(async (ops) => {
      const updates = ops.map((op) => ({ q: op.filter, u: { ...op.update, $setOnInsert: { _id: MISS_ID } }, upsert: true }));
      const reply = await writeCommand(model, { update: name, updates, ordered: false });
      const inserted = new Map((reply.upserted ?? []).map((u) => [u.index, u._id]));
      const errors = new Map((reply.writeErrors ?? []).map((we) => [we.index, we]));
      return ops.map((_op, i): Outcome<boolean> => {
        // Not expected (MongoDB and the embedded engine refuse it): reported, the document left for a look.
        if (inserted.has(i)) return { ok: false, error: new Error(`updateIfMatchBatched inserted a document (_id ${String(inserted.get(i))})`) };
        const we = errors.get(i);
        if (!we) return { ok: true, value: true };
        if (we.code === IMMUTABLE_FIELD) return { ok: true, value: false };
        return { ok: false, error: writeError(we) };
      });
    }),
  );
  return batcher.run({ filter, update });
}

/** The `_id` a miss's upsert would set, refused by the server: never stored. */
const MISS_ID = 'updateIfMatchBatched:miss';
/** MongoDB's ImmutableField: an upsert that would change the `_id` its filter names. */
const IMMUTABLE_FIELD = 66;

/**
 * Applies the same update to the document with this `_id`: the batch is one `update` statement over
 * `{_id: {$in: ids}}` (multi), cheaper on both sides than a statement per document. Bookkeeping only,
 * like updateOneBatched: it does not say whether the document was there. `update` must be the same object
 * shape for every call with the same `kind` (it names the batcher). `windowMs`: how long a batch waits
 * for more ids (the same for every call of a kind), for marks that nobody waits on.
 */
export function updateByIdBatched(model: ModelLike, kind: string, id: string, update: Record<string, unknown>, windowMs = 0, ack: Acknowledge = 'durable'): Promise<void> {
  const name = model.collection.collectionName;
  const batcher = batcherFor<string, void>(`updateById:${name}:${kind}`, () =>
    new Batcher<string, void>(async (ids) => {
      const unique = [...new Set(ids)];
      const q = unique.length === 1 ? { _id: unique[0] } : { _id: { $in: unique } };
      const [outcome] = await perStatement(model, { update: name, updates: [{ q, u: update, multi: true }], ordered: false }, 1, ack);
      if (!outcome!.ok) throw outcome!.error;
      return ids.map(() => ({ ok: true as const, value: undefined }));
    }, 500, MAX_IN_FLIGHT, windowMs),
  );
  return batcher.run(id);
}
