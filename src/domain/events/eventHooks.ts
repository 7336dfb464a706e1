import { logger } from '../../logger';
import { newLeaseOwner } from '../../processId';
import { updateByIdBatched } from '../../db/batching';
import { EventModel, eventDataOf, type EventRecord } from './eventModel';

/**
 * `onEventStored` hooks: each is called at least once after the event is durable (`hooks_done` stays false
 * until all succeed; the sweeper retries), so a hook must be idempotent on `event.id`. Within a process they
 * run one event at a time per payment, in stored order; a hook must be quick and never wait on a remote
 * system. More: docs/decisions/notes/events-and-payments.md, "Event hooks".
 */
export interface StoredEvent {
  id: string;
  accountId: string;
  type: string;
  /** The object as it was when the event happened: PaymentIntent, Refund, CheckoutSession or {message}. */
  data: Record<string, unknown>;
  createdAt: Date;
  /** Global, stable order of events. */
  seq: number;
  /** Place among its object's events (EventRecord.sequence). */
  sequence: number;
  /** Payment intent the event is about (also for refund.succeeded); null for account events. */
  paymentId: string | null;
  livemode: boolean;
  /** The span the event was emitted in, when tracing was on (EventRecord.trace_parent). */
  traceParent?: string;
}

export type EventHook = (event: StoredEvent) => void | Promise<void>;

interface HookEntry {
  name: string;
  fn: EventHook;
}

export const HOOK_LEASE_MS = 30_000;
const HOOK_RETRY_MS = 5_000;
const MAX_HOOK_ATTEMPTS = 20;

/**
 * A status change that no event announces: a transition of the state table with `events: []` (the rail
 * starting, PENDING → PROCESSING). It is not an event: never stored in `events`, never listed by
 * GET /events nor sent to webhooks (the specification fixes the event types). It only tells this
 * process's live subscribers (the event bus) at once that the intent changed; other processes learn of
 * it from the payment's own write (eventBus.ts), so it costs no write of its own.
 */
export interface StatusChange {
  /** The same in every process that sees the change: see statusChangeId. */
  id: string;
  paymentId: string;
  status: string;
  /** The PaymentIntent after the change, when the source has it at hand (this process's own changes). */
  intent: Record<string, unknown> | null;
}

/** Identifies a status change by what its write stored: the payment, the new status and updated_at. */
export function statusChangeId(paymentId: string, status: string, updatedAt: Date | string | number): string {
  return `${paymentId}:${status}:${new Date(updatedAt).getTime()}`;
}

export function toStoredEvent(
  e: Pick<EventRecord, '_id' | 'account_id' | 'type' | 'data' | 'data_json' | 'created_at' | 'seq' | 'sequence' | 'payment_id' | 'trace_parent'> & { livemode?: boolean },
): StoredEvent {
  let data: Record<string, unknown> | undefined;
  return {
    id: e._id,
    accountId: e.account_id,
    type: e.type,
    // Parsed on first use: the bus hands every event to every process, and most nobody looks into.
    get data() {
      data ??= eventDataOf(e);
      return data;
    },
    createdAt: new Date(e.created_at),
    seq: e.seq,
    sequence: e.sequence ?? 1,
    paymentId: e.payment_id ?? null,
    livemode: e.livemode ?? false,
    ...(e.trace_parent && { traceParent: e.trace_parent }),
  };
}

/**
 * One gateway's event hooks: the `onEventStored` hooks, the listeners of what it has just written,
 * and the queues its hooks run in. Built by each gateway at start (src/server.ts, the background
 * thread) and handed to the modules that register on it, so two gateways in one process each run their
 * own hooks once per event, not each other's too. The outbox is handed the storing gateway's by its
 * caller (src/domain/gatewayRuntime.ts).
 */
export interface EventHooks {
  /** Stored with every hook lease this gateway takes (`hooks_lease_owner`): what its stop hands back. */
  readonly leaseOwner: string;
  /** Registers a hook; returns a function that removes it. */
  onEventStored(fn: EventHook, opts?: { name?: string }): () => void;
  /**
   * Listens to the events this gateway itself has just inserted, called synchronously in storage order
   * (before their hooks are queued). The event bus is the one listener: it hands this process's own
   * events to its subscribers at once and leaves them out of its change stream, which then carries only
   * other processes' events (each event crossed the database twice more before, for nobody new).
   */
  onEventInsertedHere(fn: (event: StoredEvent) => void): () => void;
  /** Called by the outbox for each event it inserted, or found stored already (outbox.ts, afterStore). */
  announceInserted(event: StoredEvent): void;
  /** Listens to the status changes without an event that this gateway writes (the event bus). */
  onStatusChangedHere(fn: (change: StatusChange) => void): () => void;
  /** Called by paymentMutate.ts once a status change without an event is written. */
  announceStatusChanged(change: StatusChange): void;
  /**
   * Queues the event's hooks. `claimedUntil`: the event was inserted by this gateway with its hook lease
   * already taken, valid until then (see outbox.ts storeEvent).
   */
  enqueueHooks(event: StoredEvent, opts?: { claimedUntil?: number | null }): Promise<void>;
  /** Resolves when every hook queued so far for the account (or for all accounts) has run. */
  hooksIdle(accountId?: string): Promise<void>;
}

/** Listeners called synchronously, in this gateway, with what it has just written. */
function localListeners<T>() {
  const listeners = new Set<(value: T) => void>();
  return {
    on(fn: (value: T) => void): () => void {
      listeners.add(fn);
      return () => {
        listeners.delete(fn);
      };
    },
    announce(value: T): void {
      for (const fn of listeners) fn(value);
    },
  };
}

function chainKey(event: StoredEvent): string {
  return `${event.accountId}\u0000${event.paymentId ?? ''}`;
}

export function createEventHooks(): EventHooks {
  const leaseOwner = newLeaseOwner();
  const hooks: HookEntry[] = [];
  const inserted = localListeners<StoredEvent>();
  const statusChanged = localListeners<StatusChange>();
  /**
   * Promise chains, one per payment (events without a payment: one per account): hooks of one payment
   * run in storage order within this gateway, and different payments' hooks run side by side, so that
   * their database work shares batched commands (src/db/batching.ts).
   */
  const queues = new Map<string, Promise<void>>();
  /** The chain keys of each account, for hooksIdle(accountId). */
  const accountChains = new Map<string, Set<string>>();
  /** hooks_done marks still being written. */
  const marking = new Set<Promise<void>>();

  /**
   * Claims the event's hook lease (so one process runs them), runs every hook, then marks it done. A
   * failing hook is retried by the sweeper with a growing delay; after MAX_HOOK_ATTEMPTS the event is
   * marked done with `hooks_failed` so that one poisonous event cannot be retried for ever.
   */
  async function runHooks(event: StoredEvent, claimedUntil: number | null): Promise<void> {
    const now = Date.now();
    // A lease taken at insert is used while it has a comfortable margin left (the event may have
    // waited in its account's queue); otherwise claim it now, as for any other event.
    const claimed =
      claimedUntil !== null && claimedUntil - now > HOOK_LEASE_MS / 2
        ? { hook_attempts: 1 }
        : await EventModel.findOneAndUpdate(
            {
              _id: event.id,
              hooks_done: false,
              // Our own lease from the insert counts as free to us.
              $or: [{ hooks_lease_until: { $lte: now } }, ...(claimedUntil !== null ? [{ hooks_lease_until: claimedUntil }] : [])],
            },
            { $set: { hooks_lease_until: now + HOOK_LEASE_MS, hooks_lease_owner: leaseOwner }, $inc: { hook_attempts: 1 } },
            { projection: { _id: 1, hook_attempts: 1 }, returnDocument: 'after', lean: true },
          );
    if (!claimed) return;
    try {
      for (const hook of hooks) await hook.fn(event);
    } catch (err) {
      const attempts = claimed.hook_attempts ?? 1;
      const giveUp = attempts >= MAX_HOOK_ATTEMPTS;
      logger[giveUp ? 'error' : 'warn']({ err, eventId: event.id, type: event.type, attempts }, giveUp ? 'event hook failed for good' : 'event hook threw; it will be retried');
      await EventModel.updateOne(
        { _id: event.id },
        giveUp
          ? { $set: { hooks_done: true, hooks_failed: true, hooks_lease_until: 0 } }
          : // A retry's delay, not a lease: no owner, so a stop does not hand it back early.
            { $set: { hooks_lease_until: Date.now() + Math.min(HOOK_RETRY_MS * attempts, 5 * 60_000), hooks_lease_owner: null } },
      );
      return;
    }
    // Not awaited by the account's queue: the next event's hooks need not wait for this bookkeeping
    // (only the sweeper reads it, for events whose lease of HOOK_LEASE_MS has run out), so the marks of
    // HOOKS_DONE_WINDOW_MS share one batched update. A crash in that window runs the hooks again, as a
    // crash between the hooks and their mark always could: hooks are idempotent.
    const marked = updateByIdBatched(EventModel, 'hooks_done', event.id, HOOKS_DONE, HOOKS_DONE_WINDOW_MS, 'applied')
      .catch((err: unknown) => logger.warn({ err, eventId: event.id }, 'could not mark event hooks done; the sweeper will run them again'))
      .finally(() => marking.delete(marked));
    marking.add(marked);
  }

  return {
    leaseOwner,
    onEventStored(fn, opts = {}) {
      const entry = { name: opts.name ?? (fn.name || `hook${hooks.length + 1}`), fn };
      hooks.push(entry);
      return () => {
        const i = hooks.indexOf(entry);
        if (i >= 0) hooks.splice(i, 1);
      };
    },
    onEventInsertedHere: inserted.on,
    announceInserted: inserted.announce,
    onStatusChangedHere: statusChanged.on,
    announceStatusChanged: statusChanged.announce,
    enqueueHooks(event, opts = {}) {
      const key = chainKey(event);
      const prev = queues.get(key) ?? Promise.resolve();
      const next = prev.then(() => runHooks(event, opts.claimedUntil ?? null)).catch((err) => {
        logger.error({ err, eventId: event.id }, 'event hooks failed');
      });
      queues.set(key, next);
      const chains = accountChains.get(event.accountId) ?? new Set<string>();
      chains.add(key);
      accountChains.set(event.accountId, chains);
      void next.then(() => {
        if (queues.get(key) !== next) return;
        queues.delete(key);
        chains.delete(key);
        if (chains.size === 0 && accountChains.get(event.accountId) === chains) accountChains.delete(event.accountId);
      });
      return next;
    },
    async hooksIdle(accountId) {
      // A hook may store further events; wait until no chain is left.
      for (;;) {
        const keys = accountId ? [...(accountChains.get(accountId) ?? [])] : [...queues.keys()];
        const pending = keys.map((k) => queues.get(k)).filter((p): p is Promise<void> => p !== undefined);
        if (pending.length === 0) break;
        await Promise.all(pending);
      }
      await Promise.all([...marking]);
    },
  };
}

const HOOKS_DONE = { $set: { hooks_done: true, hooks_lease_until: 0 } };
/**
 * At 300 payments/s the marks of one turn were one or two events (0.48 commands per payment under
 * bench:rail); 100 ms gathers about 60.
 */
const HOOKS_DONE_WINDOW_MS = 100;
