import { logger } from '../../logger';
import { statusChangeId, type StatusChange } from '../../domain/events/eventHooks';
import { PaymentModel } from '../../domain/payments/paymentModel';
import { STATUSES_ENTERED_WITHOUT_EVENT } from '../../domain/payments/paymentStates';
import { RecentIds } from './recentIds';

export type { StatusChange };
export type StatusChangeListener = (change: StatusChange) => void;

/** What of the running source watches other processes' status changes (change streams only). */
export interface StatusWatch {
  /** Opens the stream on `payments` if status subscribers exist; resolves once it watches. */
  statusDemand?(): Promise<void>;
  /** The last status subscriber left. */
  statusIdle?(): void;
}

export type StatusChannel = ReturnType<typeof createStatusChannel>;

/**
 * The status changes no event announces (PENDING → PROCESSING), on a channel of their own so that
 * event subscribers never see them; keyed by payment id, each handed on once whatever the sources.
 * `watch`: the running source, asked to watch while there are subscribers.
 */
export function createStatusChannel(watch: () => StatusWatch | null) {
  const subscribers = new Map<string, Set<StatusChangeListener>>();
  const recentStatusChanges = new RecentIds(20_000);

  /** Hands one status change to the payment's status subscribers, once whatever the sources. */
  function publish(change: StatusChange): void {
    const subs = subscribers.get(change.paymentId);
    // Remembered even without subscribers: a source that repeats it later must not deliver it then.
    if (!recentStatusChanges.add(change.id) || !subs) return;
    for (const listener of [...subs]) {
      try {
        listener(change);
      } catch (err) {
        logger.error({ err, paymentId: change.paymentId }, 'status change listener threw');
      }
    }
  }

  return {
    publish,

    /**
     * Registers `listener` for the status changes of one payment that no event announces. Same contract
     * as the events' `subscribe`: synchronous, must not throw or block. The change carries no account
     * (another process's update does not say it): the payment id is the key, and the one subscriber, the
     * intent feed, delivers nothing before its read of the intent has checked the caller's access.
     */
    subscribe(paymentId: string, listener: StatusChangeListener): () => void {
      let set = subscribers.get(paymentId);
      if (!set) subscribers.set(paymentId, (set = new Set()));
      set.add(listener);
      // A failure (the database away) is the business of statusChangesReady's caller; the next demand retries.
      watch()?.statusDemand?.().catch(() => undefined);
      return () => {
        const current = subscribers.get(paymentId);
        current?.delete(listener);
        if (current && current.size === 0) subscribers.delete(paymentId);
        if (subscribers.size === 0) watch()?.statusIdle?.();
      };
    },

    /**
     * Resolves once other processes' status changes reach this process's status subscribers: in change
     * stream mode the stream on `payments` opens with the first subscriber, so a subscriber awaits this
     * (after subscribing) before reading the payment's state, and no change can fall between its read
     * and the stream. Polling reads the subscribed payments' state every round: nothing to wait for.
     */
    ready(): Promise<void> {
      return watch()?.statusDemand?.() ?? Promise.resolve();
    },

    hasSubscribers: () => subscribers.size > 0,

    /**
     * The poll fallback, and the catch-up after the stream on `payments` lost its history: the payments
     * this process has status subscribers for, as they are stored now. Returns how many it read.
     */
    async poll(): Promise<number> {
      const ids = [...subscribers.keys()];
      for (let i = 0; i < ids.length; i += 500) {
        const docs = await PaymentModel.find(
          { _id: { $in: ids.slice(i, i + 500) }, status: { $in: STATUSES_ENTERED_WITHOUT_EVENT } },
          { status: 1, updated_at: 1 },
        ).lean<Array<{ _id: string; status: string; updated_at: Date }>>();
        for (const d of docs) publish({ id: statusChangeId(d._id, d.status, d.updated_at), paymentId: d._id, status: d.status, intent: null });
      }
      return ids.length;
    },
  };
}
