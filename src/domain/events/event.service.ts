import { ApiError } from '../../errors';
import { EventModel } from './event.model';
import { toEventResource, type EventResource } from './event.serializer';

export interface ListEventsOptions {
  limit: number;
  type?: string;
  /** An event id: list the events older than that one. */
  startingAfter?: string;
}

/** GET /events: newest first (by the stable `seq` order). */
export async function listEvents(accountId: string, opts: ListEventsOptions): Promise<EventResource[]> {
  const filter: Record<string, unknown> = { account_id: accountId };
  if (opts.type) filter.type = opts.type;
  if (opts.startingAfter) {
    const cursor = await EventModel.findOne({ _id: opts.startingAfter, account_id: accountId }, { seq: 1 }).lean();
    if (!cursor) throw ApiError.invalid(`starting_after: no such event '${opts.startingAfter}'`);
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

/** Batch read (DataLoader): each payment's events, oldest first, for the account's payments among `paymentIds`. */
export async function listEventsForPayments(accountId: string, paymentIds: readonly string[]): Promise<Map<string, EventResource[]>> {
  const docs = await EventModel.find({ account_id: accountId, payment_id: { $in: [...paymentIds] } }).sort({ seq: 1 }).lean();
  const byPayment = new Map<string, EventResource[]>(paymentIds.map((id) => [id, []]));
  for (const d of docs) byPayment.get(d.payment_id ?? '')?.push(toEventResource(d));
  return byPayment;
}

export async function getEvent(accountId: string, eventId: string): Promise<EventResource> {
  const doc = await EventModel.findOne({ _id: eventId, account_id: accountId }).lean();
  if (!doc) throw ApiError.notFound('event', eventId);
  return toEventResource(doc);
}
