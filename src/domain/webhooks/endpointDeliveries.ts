import { ApiError } from '../../errors';
import { nowForAccount } from '../clock/accountTime';
import { toEndpointDelivery, type EndpointDelivery } from './paymentDeliveries';
import { WebhookDeliveryModel, type AttemptLogEntry } from './webhookDeliveryModel';
import type { DeliveryState } from './deliveryStates';
import { getWebhookEndpointRecord } from './webhookEndpointService';

/**
 * What the dashboard's endpoint page reads beyond REST: an endpoint's deliveries a page at a time with
 * filters, its recent success rate, and a delivery's every attempt and request headers. REST's shapes
 * do not change (these are GraphQL-only fields).
 */

export interface DeliveryPageQuery {
  limit: number;
  /** A delivery id of this endpoint: the page starts after it. */
  startingAfter?: string | null;
  state?: DeliveryState | null;
  /** REST spelling (`payment.succeeded`). */
  eventType?: string | null;
}

/**
 * The endpoint's deliveries newest first (event order, then id), chaos copies included, `limit` at most.
 * Read along an index that starts with the endpoint and the filters given, then (event_seq, _id), so no
 * sort and no delivery read that the page does not show (webhookDeliveryModel.ts).
 */
export async function listEndpointDeliveriesPage(accountId: string, endpointId: string, q: DeliveryPageQuery): Promise<EndpointDelivery[]> {
  await getWebhookEndpointRecord(accountId, endpointId);
  const filter: Record<string, unknown> = { endpoint_id: endpointId, account_id: accountId };
  if (q.state) filter.state = q.state;
  if (q.eventType) filter.event_type = q.eventType;
  if (q.startingAfter) {
    const from = await WebhookDeliveryModel.findOne({ _id: q.startingAfter, endpoint_id: endpointId, account_id: accountId }, { event_seq: 1 }).lean();
    if (!from) throw ApiError.invalid(`There is no delivery ${q.startingAfter} of this endpoint to continue after`);
    // A range on event_seq bounds the index scan from the cursor on; $nor drops the few deliveries of the
    // cursor's own event at or before it. (An $or of the two cases scanned from the newest delivery.)
    filter.event_seq = { $lte: from.event_seq };
    filter.$nor = [{ event_seq: from.event_seq, _id: { $gte: from._id } }];
  }
  const docs = await WebhookDeliveryModel.find(filter).sort({ event_seq: -1, _id: -1 }).limit(q.limit).lean();
  return docs.map(toEndpointDelivery);
}

/** How an endpoint's deliveries went lately (EndpointSuccess in schema.graphql says what counts). */
export interface EndpointSuccess {
  delivered: number;
  failed: number;
  rate: number | null;
}

/** The window of `recentSuccess`: the last 24 h of the account's clock. */
export const RECENT_SUCCESS_MS = 24 * 3_600_000;

/**
 * Genuine deliveries of events created in the last 24 h of account time that were attempted: delivered,
 * or failed (retrying or dead-lettered). Chaos copies carry no `event_created_at`, so they are not
 * counted; deliveries not yet attempted (PENDING) are neither a success nor a failure yet. Two counts on
 * the index (endpoint_id, event_created_at, state), bounded by the window.
 */
export async function endpointSuccess(accountId: string, endpointId: string): Promise<EndpointSuccess> {
  const since = new Date((await nowForAccount(accountId)).getTime() - RECENT_SUCCESS_MS);
  const count = (states: DeliveryState[]) => WebhookDeliveryModel.countDocuments({ endpoint_id: endpointId, event_created_at: { $gte: since }, state: { $in: states } });
  const [delivered, failed] = await Promise.all([count(['DELIVERED']), count(['RETRYING', 'DEAD_LETTER'])]);
  return { delivered, failed, rate: delivered + failed > 0 ? delivered / (delivered + failed) : null };
}

/** A delivery's attempts and last request headers, which REST's delivery resource does not carry. */
export interface DeliveryAttempts {
  attempts: AttemptLogEntry[];
  headers: Record<string, string> | null;
}

/** The attempts of each delivery of the account, by id, in one query (GraphQL's loader batches a page). */
export async function deliveryAttempts(accountId: string, ids: readonly string[]): Promise<Map<string, DeliveryAttempts>> {
  const docs = await WebhookDeliveryModel.find({ _id: { $in: [...ids] }, account_id: accountId }, { attempt_log: 1, request_headers: 1 }).lean();
  return new Map(docs.map((d) => [d._id, { attempts: d.attempt_log ?? [], headers: d.request_headers ?? null }]));
}
