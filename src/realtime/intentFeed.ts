import { listEventsForPayment, type EventResource } from '../domain/events';
import type { PaymentIntentResource } from '../domain/payments/paymentSerializer';
import { isFinalStatus } from '../domain/payments/paymentStates';
import { statusChangesReady, subscribe, subscribeStatusChanges, type BusEvent, type StatusChange } from './eventBus';

/**
 * The live feed of one payment intent, which SSE (paymentStream.ts) and GraphQL `paymentIntentUpdated`
 * only frame: subscribe first, then read the stored events and the intent, so nothing falls between;
 * then each change once, and the outcome once final (docs/streams.md, "One feed, no polling").
 */
export type FeedItem = { kind: 'event'; event: BusEvent } | { kind: 'status'; change: StatusChange };

/** Upper bound on waiting for a follow-up event (payment.succeeded, payment.reconciled) once final. */
const FOLLOW_UP_WAIT_MS = 10_000;

/** Event types whose `data` is the intent (refund.succeeded carries a Refund). */
export function isIntentEvent(type: string): boolean {
  return type.startsWith('payment.') || type === 'reference.paid';
}

export interface IntentFeedSource {
  accountId: string;
  paymentId: string;
  /** Reads the current intent (throws ApiError 404 when it is not the caller's). */
  loadIntent(): Promise<PaymentIntentResource>;
  /** Which of the payment's events the feed carries (default: all of them). */
  accepts?: (type: string) => boolean;
  /** Also the status changes no event announces (PENDING → PROCESSING; eventBus.ts). */
  statusChanges?: boolean;
}

export interface IntentFeed {
  /** The payment's stored events when the feed opened, oldest first (until `start`). */
  readonly history: EventResource[];
  /** The intent when the feed opened (until `start`). */
  readonly intent: PaymentIntentResource;
  /** Starts delivering (at once, synchronously, what was buffered), then each live change once. */
  start(deliver: (item: FeedItem) => void, onOutcome?: () => void): void;
  /** Stops delivering and releases the subscriptions (idempotent). */
  close(): void;
}

/** Subscribes and reads the starting state; throws (and releases everything) when a read fails. */
export async function openIntentFeed(src: IntentFeedSource): Promise<IntentFeed> {
  const buffered: FeedItem[] = [];
  let onLive: ((item: FeedItem) => void) | null = null;
  const take = (item: FeedItem) => (onLive ? onLive(item) : buffered.push(item));
  // The closures below outlive this call: they take what they use, not `src`, whose loadIntent would
  // keep the opening request's objects for the stream's life.
  const accepts = src.accepts;
  const releases = [
    subscribe({ accountId: src.accountId, paymentId: src.paymentId }, (event) => {
      if (!accepts || accepts(event.type)) take({ kind: 'event', event });
    }),
  ];
  if (src.statusChanges) releases.push(subscribeStatusChanges(src.paymentId, (change) => take({ kind: 'status', change })));
  let followUpTimer: NodeJS.Timeout | null = null;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    for (const release of releases) release();
    if (followUpTimer) clearTimeout(followUpTimer);
  };

  let history: EventResource[];
  let intent: PaymentIntentResource;
  try {
    // Other processes' status changes reach the bus once its stream on payments watches (opened for
    // the first status subscriber): only then is the state read, so no change falls in between.
    if (src.statusChanges) await statusChangesReady();
    history = await listEventsForPayment(src.accountId, src.paymentId);
    intent = await src.loadIntent();
  } catch (err) {
    close();
    throw err;
  }

  const begin: StartFeed = (history, intent, deliver, onOutcome) => {
    const known = new Set(history.map((e) => e.id));
    let status: string = intent.status;
    const seen = new Set<string>(history.map((e) => e.type));
    if (status === 'UNKNOWN') seen.add('payment.unknown');
    // Events that always follow another one in the same transition.
    const awaitingFollowUp = () =>
      (seen.has('reference.paid') && !seen.has('payment.succeeded')) || (seen.has('payment.unknown') && !seen.has('payment.reconciled'));
    let outcomeSent = false;
    const outcome = () => {
      if (outcomeSent || closed || !onOutcome) return;
      outcomeSent = true;
      onOutcome();
    };
    const checkOutcome = () => {
      if (!isFinalStatus(status)) return;
      if (awaitingFollowUp()) {
        followUpTimer ??= setTimeout(outcome, FOLLOW_UP_WAIT_MS);
        return;
      }
      outcome();
    };

    const live = (item: FeedItem) => {
      if (closed) return;
      if (item.kind === 'status') {
        // Such a status is never final; one that comes late (the payments' change stream and the
        // events' are separate cursors) must not reopen a final intent.
        if (!isFinalStatus(status)) status = item.change.status;
      } else {
        const e = item.event;
        if (known.has(e.id)) return;
        known.add(e.id);
        seen.add(e.type);
        const s = isIntentEvent(e.type) ? (e.data as { status?: unknown }).status : undefined;
        if (typeof s === 'string') status = s;
      }
      deliver(item);
      checkOutcome();
    };
    for (const item of buffered.splice(0)) live(item);
    onLive = live;
    checkOutcome();
  };
  return new OpenedFeed(history, intent, close, begin);
}

type StartFeed = (history: EventResource[], intent: PaymentIntentResource, deliver: (item: FeedItem) => void, onOutcome?: () => void) => void;

/**
 * A feed between its reads and its start. A class, so that the getters sit on the prototype: an object
 * literal's own getters made each open feed a dictionary of its own (bench/HISTORY.md, "Issue 56: RSS
 * after a GC").
 */
class OpenedFeed implements IntentFeed {
  // Released once the feed starts: a stream lives for minutes or hours, and these are a copy of the
  // intent and of each of its stored events that nothing reads after the snapshot.
  #history: EventResource[] | null;
  #intent: PaymentIntentResource | null;
  constructor(
    history: EventResource[],
    intent: PaymentIntentResource,
    readonly close: () => void,
    private readonly begin: StartFeed,
  ) {
    this.#history = history;
    this.#intent = intent;
  }
  get history(): EventResource[] {
    return this.#history ?? [];
  }
  get intent(): PaymentIntentResource {
    if (!this.#intent) throw new Error('the intent feed has started: its starting state is gone');
    return this.#intent;
  }
  start(deliver: (item: FeedItem) => void, onOutcome?: () => void): void {
    const history = this.#history ?? [];
    const intent = this.intent;
    this.#history = null;
    this.#intent = null;
    this.begin(history, intent, deliver, onOutcome);
  }
}
