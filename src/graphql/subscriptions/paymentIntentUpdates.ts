import { clientTokenRefused, type ClientTokenGrant } from '../../domain/clientTokens/clientTokenService';
import { getPaymentIntentForAccount } from '../../domain/payments/paymentService';
import type { PaymentIntentResource } from '../../domain/payments/paymentSerializer';
import type { ClientTokenStreams } from '../../realtime/clientTokenStreams';
import { openIntentFeed, type FeedItem } from '../../realtime/intentFeed';
import type { GraphQLContext } from '../context';
import type { PaymentIntentUpdateModel } from '../models';
import { AsyncQueue } from './asyncQueue';

/**
 * `paymentIntentUpdated(id)`: the GraphQL framing over the intent feed (realtime/intentFeed.ts): the
 * snapshot, then every change, status changes without an event included. A message older than the last one
 * sent is dropped, so the order is the intent's. More: docs/decisions/notes/graphql.md,
 * "paymentIntentUpdated".
 */
export interface PaymentIntentUpdatesOptions {
  untilOutcome?: boolean;
  /**
   * The client token the subscription was opened with: its revocation or expiry ends the subscription
   * with `authentication_failed`, through the gateway's streams of client tokens (realtime/clientTokenStreams.ts).
   */
  clientToken?: { grant: ClientTokenGrant; streams: ClientTokenStreams };
}

export async function paymentIntentUpdates(
  ctx: GraphQLContext,
  paymentId: string,
  opts: PaymentIntentUpdatesOptions = {},
): Promise<AsyncIterableIterator<PaymentIntentUpdateModel>> {
  const accountId = ctx.actor.accountId;
  const read = () => getPaymentIntentForAccount(accountId, paymentId);
  const feed = await openIntentFeed({ accountId, paymentId, loadIntent: read, statusChanges: true });
  let releaseToken: (() => void) | null = null;
  const queue = new AsyncQueue<PaymentIntentUpdateModel>(() => {
    feed.close();
    releaseToken?.();
  });
  if (opts.clientToken) releaseToken = opts.clientToken.streams.hold(opts.clientToken.grant, () => queue.fail(clientTokenRefused()));
  const snapshot = feed.intent;
  // What ordering needs of the last intent sent, not the intent: a subscription lives for hours.
  let lastStatus = snapshot.status;
  let lastUpdatedAt = snapshot.updated_at;

  // Messages are emitted in order even when one needs a read (refund.succeeded, another process's
  // status change).
  let chain = Promise.resolve();
  const emit = (eventType: string | null, eventId: string | null, intent: PaymentIntentResource) => {
    if (queue.isClosed || intent.updated_at < lastUpdatedAt) return;
    lastStatus = intent.status;
    lastUpdatedAt = intent.updated_at;
    queue.push({ snapshot: false, eventType, eventId, paymentIntent: intent });
  };
  const onItem = async (item: FeedItem) => {
    if (item.kind === 'event') {
      const e = item.event;
      const data = e.data as { object?: unknown };
      emit(e.type, e.id, data.object === 'payment_intent' ? (e.data as unknown as PaymentIntentResource) : await read());
      return;
    }
    const { change } = item;
    const intent = (change.intent as unknown as PaymentIntentResource | null) ?? (await read());
    // Sent while the intent is still in that status and newer than what was sent (an event may have
    // announced a later state already).
    if (intent.status === change.status && intent.status !== lastStatus && intent.updated_at > lastUpdatedAt) emit(null, null, intent);
  };

  queue.push({ snapshot: true, eventType: null, eventId: null, paymentIntent: snapshot });
  const ending = opts.untilOutcome
    ? () => {
        chain = chain.then(() => queue.end());
      }
    : undefined;
  feed.start((item) => {
    chain = chain.then(() => onItem(item)).catch((err: unknown) => queue.fail(err));
  }, ending);
  return queue;
}
