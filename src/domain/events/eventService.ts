import { ApiError } from '../../errors';
import { findByFieldBatched } from '../../db/batching';
import { EventModel, type EventRecord } from './eventModel';
import { toEventResource, type EventResource } from './eventSerializer';

export interface ListEventsOptions {
  limit: number;
  type?: string;
  /** An event id: list the events older than that one. */
  startingAfter?: string;
  /** Only the events of this object (a payment intent's id). */
  objectId?: string;
}

/** GET /events: newest first (by the stable `seq` order). */
export async function listEvents(accountId: string, opts: ListEventsOptions): Promise<EventResource[]> {
  const filter: Record<string, unknown> = { account_id: accountId };
  if (opts.type) filter.type = opts.type;
  if (opts.objectId !== undefined) filter.payment_id = opts.objectId;
  if (opts.startingAfter) {
    const cursor = await EventModel.findOne({ _id: opts.startingAfter, account_id: accountId }, { seq: 1 }).lean();
    if (!cursor) throw ApiError.invalid(`Invalid query parameter 'starting_after': no such event '${opts.startingAfter}'`);
    filter.seq = { $lt: cursor.seq };
  }
  const docs = await EventModel.find(filter).sort({ seq: -1 }).limit(opts.limit).lean();
  return docs.map(toEventResource);
}

/**
 * The stored events of one payment intent (payment.*, reference.paid, refund.succeeded), oldest first:
 * the order in which they happened, as streams replay them.
 */
export async function listEventsForPayment(accountId: string, paymentId: string): Promise<EventResource[]> {
  const docs = await EventModel.find({ account_id: accountId, payment_id: paymentId }).sort({ seq: 1 }).lean();
  return docs.map(toEventResource);
}

/** What an event's resource is made of, and what places it (account, payment, order). */
const EVENT_RESOURCE_FIELDS = { _id: 1, account_id: 1, payment_id: 1, seq: 1, sequence: 1, type: 1, created_at: 1, livemode: 1, data: 1, data_json: 1 } as const;
type EventResourceFields = Pick<EventRecord, keyof typeof EVENT_RESOURCE_FIELDS>;

/**
 * Batch read (DataLoader): each payment's events, oldest first, for the account's payments among
 * `paymentIds`. The read is coalesced with other requests' in the same turn (db/batching.ts): one
 * command for all the payments of all of them, rather than one per request.
 */
export async function listEventsForPayments(accountId: string, paymentIds: readonly string[]): Promise<Map<string, EventResource[]>> {
  const lists = await Promise.all(paymentIds.map((id) => findByFieldBatched<EventResourceFields>(EventModel, 'payment_id', id, EVENT_RESOURCE_FIELDS)));
  return new Map(
    paymentIds.map((id, i) => [
      id,
      lists[i]!
        .filter((d) => d.account_id === accountId)
        .sort((a, b) => a.seq - b.seq)
        .map(toEventResource),
    ]),
  );
}

/** One event of the account, by id (GraphQL's `node`): 404 for an id the account has no event with. */
export async function getEvent(accountId: string, eventId: string): Promise<EventResource> {
  const doc = await EventModel.findOne({ _id: eventId, account_id: accountId }).lean();
  if (!doc) throw ApiError.notFound('event', eventId);
  return toEventResource(doc);
}
