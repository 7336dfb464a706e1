import { logger } from '../../logger';
import type { StoredEvent } from '../../domain/events/eventHooks';
import { RecentIds } from './recentIds';

export type BusEvent = StoredEvent;

export interface SubscriptionFilter {
  accountId: string;
  /** Only the events of this payment intent (payment.*, reference.paid, refund.succeeded). */
  paymentId?: string;
  /** Only these event types. */
  types?: readonly string[];
}

export type BusListener = (event: BusEvent) => void;

interface Subscriber {
  filter: SubscriptionFilter;
  types: Set<string> | null;
  listener: BusListener;
  seen: RecentIds;
}

function addTo(index: Map<string, Set<Subscriber>>, key: string, sub: Subscriber): void {
  let set = index.get(key);
  if (!set) index.set(key, (set = new Set()));
  set.add(sub);
}

function removeFrom(index: Map<string, Set<Subscriber>>, key: string, sub: Subscriber): void {
  const set = index.get(key);
  if (!set) return;
  set.delete(sub);
  if (set.size === 0) index.delete(key);
}

function deliver(sub: Subscriber, event: BusEvent): void {
  if (sub.filter.accountId !== event.accountId && sub.filter.accountId !== '*') return;
  if (sub.types && !sub.types.has(event.type)) return;
  if (!sub.seen.add(event.id)) return;
  try {
    sub.listener(event);
  } catch (err) {
    logger.error({ err, eventId: event.id }, 'event bus listener threw');
  }
}

export type EventChannel = ReturnType<typeof createEventChannel>;

/**
 * The stored events' channel: subscribers indexed by payment and by account id (an event costs a couple
 * of look-ups however many are open), each event handed on once whatever the sources.
 */
export function createEventChannel() {
  const byPayment = new Map<string, Set<Subscriber>>();
  const byAccount = new Map<string, Set<Subscriber>>();
  let subscriberCount = 0;
  const recentlyPublished = new RecentIds(20_000);
  let published = 0;
  /** The highest `seq` published, whatever the source: where a replay after a lost history starts. */
  let highestSeq = 0;

  return {
    /**
     * Registers `listener` for the events matching `filter`; returns the function that unsubscribes.
     * Listeners are called synchronously from the bus and must not throw or block (queue work instead).
     * Only events stored after the bus started are delivered; replaying history is the caller's job
     * (e.g. SSE reads the payment's stored events, then relies on the bus).
     */
    subscribe(filter: SubscriptionFilter, listener: BusListener): () => void {
      const sub: Subscriber = {
        filter,
        types: filter.types && filter.types.length > 0 ? new Set(filter.types) : null,
        listener,
        // A payment's subscriber (an intent feed, which also drops the ids it has seen) needs few.
        seen: new RecentIds(filter.paymentId ? 32 : 256),
      };
      if (filter.paymentId) addTo(byPayment, filter.paymentId, sub);
      else addTo(byAccount, filter.accountId, sub);
      subscriberCount++;
      let active = true;
      return () => {
        if (!active) return;
        active = false;
        subscriberCount--;
        if (filter.paymentId) removeFrom(byPayment, filter.paymentId, sub);
        else removeFrom(byAccount, filter.accountId, sub);
      };
    },

    /** Hands one stored event to its subscribers; false when it had been published already. */
    publish(event: BusEvent): boolean {
      if (!recentlyPublished.add(event.id)) return false;
      published++;
      if (event.seq > highestSeq) highestSeq = event.seq;
      if (event.paymentId) {
        const subs = byPayment.get(event.paymentId);
        if (subs) for (const sub of [...subs]) deliver(sub, event);
      }
      const subs = byAccount.get(event.accountId);
      if (subs) for (const sub of [...subs]) deliver(sub, event);
      return true;
    },

    highestSeq: () => highestSeq,
    stats: () => ({ subscribers: subscriberCount, published }),
  };
}
