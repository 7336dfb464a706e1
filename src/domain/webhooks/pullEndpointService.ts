import { ApiError } from '../../errors';
import { isDuplicateKey } from '../../db/errors';
import type { EventResource } from '../events/eventSerializer';
import { PendingEventModel } from './pendingEventModel';
import { getWebhookEndpointRecord } from './webhookEndpointService';
import type { WebhookEndpointRecord } from './webhookEndpointModel';

/** Pull endpoints (`mode: pull`): events wait here instead of being POSTed (contract-decisions.md). */

export const isPullEndpoint = (e: Pick<WebhookEndpointRecord, 'mode'>) => e.mode === 'pull';

/** Leaves one event waiting for a pull endpoint; creating it again is harmless (same `_id`). */
export async function holdForPull(endpoint: WebhookEndpointRecord, event: { id: string; seq: number }, body: string): Promise<void> {
  try {
    await PendingEventModel.create({
      _id: `${endpoint._id}:${event.id}`,
      account_id: endpoint.account_id,
      endpoint_id: endpoint._id,
      event_id: event.id,
      event_seq: event.seq,
      body,
      acked: false,
      created_at: new Date(),
    });
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
}

async function pullEndpoint(accountId: string, id: string): Promise<WebhookEndpointRecord> {
  const endpoint = await getWebhookEndpointRecord(accountId, id);
  if (!isPullEndpoint(endpoint)) throw ApiError.invalid(`webhook endpoint ${id} is a push endpoint: its events are POSTed to its url, not pulled`);
  return endpoint;
}

/** The unacknowledged events, oldest first: `limit` and one more, for `has_more`. */
export async function listPendingEvents(accountId: string, id: string, limit: number): Promise<{ object: 'list'; data: EventResource[]; has_more: boolean }> {
  await pullEndpoint(accountId, id);
  const docs = await PendingEventModel.find({ endpoint_id: id, acked: false }, { body: 1 })
    .sort({ event_seq: 1 })
    .limit(limit + 1)
    .lean();
  return { object: 'list', data: docs.slice(0, limit).map((d) => JSON.parse(d.body) as EventResource), has_more: docs.length > limit };
}

/**
 * One conditional update over the ids: each event moves from unacknowledged to acknowledged once, so
 * `modifiedCount` counts only what this call acknowledged, whoever else acknowledges at the same moment.
 */
export async function ackPendingEvents(accountId: string, id: string, eventIds: readonly string[]): Promise<{ object: 'acknowledgement'; acknowledged: number }> {
  await pullEndpoint(accountId, id);
  const ids = [...new Set(eventIds)].map((e) => `${id}:${e}`);
  const res = await PendingEventModel.updateMany({ _id: { $in: ids }, endpoint_id: id, acked: false }, { $set: { acked: true } });
  return { object: 'acknowledgement', acknowledged: res.modifiedCount };
}
