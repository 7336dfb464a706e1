import { randomInt } from 'node:crypto';
import { ApiError } from '../../errors';
import { EMPTY_CHAOS_REPORT, type ChaosReport, type ChaosSettings } from './chaos';
import { bumpEndpointsVersion } from './endpointCache';
import { WebhookEndpointModel, type WebhookEndpointRecord } from './webhookEndpointModel';
import { getWebhookEndpointRecord } from './webhookEndpointService';
import { isPullEndpoint } from './pullEndpointService';
import type { components } from '../../../generated/openapi';

/** The service of /webhook_endpoints/{id}/chaos (REST and GraphQL): the settings and their report. */
export type WebhookChaosResource = components['schemas']['WebhookChaos'];
export type SetWebhookChaosInput = components['schemas']['SetWebhookChaosRequest'];

function toWebhookChaosResource(e: Pick<WebhookEndpointRecord, '_id' | 'chaos' | 'chaos_report'>): WebhookChaosResource {
  const c = e.chaos ?? null;
  return {
    object: 'webhook_chaos',
    endpoint: e._id,
    enabled: c !== null,
    duplicate: c?.duplicate ?? 0,
    reorder: c?.reorder ?? 0,
    bad_signature: c?.bad_signature ?? 0,
    stale_timestamp: c?.stale_timestamp ?? 0,
    delay_ms: c?.delay_ms ?? null,
    seed: c?.seed ?? null,
    report: { ...EMPTY_CHAOS_REPORT, ...e.chaos_report },
  };
}

const PROJECTION = { _id: 1, chaos: 1, chaos_report: 1 } as const;

async function updateChaos(accountId: string, id: string, set: Partial<WebhookEndpointRecord>): Promise<WebhookChaosResource> {
  const updated = await WebhookEndpointModel.findOneAndUpdate({ _id: id, account_id: accountId }, { $set: set }, { returnDocument: 'after', projection: PROJECTION, lean: true });
  if (!updated) throw ApiError.notFound('webhook endpoint', id);
  // Every process's endpoint cache reads the endpoint again: its deliveries from now on follow the change.
  await bumpEndpointsVersion(accountId);
  return toWebhookChaosResource(updated);
}

/** Replaces the settings and starts the report again; the body is valid by the contract already. */
export async function setWebhookChaos(accountId: string, id: string, input: SetWebhookChaosInput): Promise<WebhookChaosResource> {
  // The rules the schema cannot say; checked before anything is written.
  if (input.delay_ms && input.delay_ms.min > input.delay_ms.max) throw ApiError.invalid('delay_ms: min must not be above max');
  if (isPullEndpoint(await getWebhookEndpointRecord(accountId, id))) throw ApiError.invalid(`webhook endpoint ${id} is a pull endpoint: nothing is sent to it, so chaos has nothing to do`);
  const chaos: ChaosSettings = {
    duplicate: input.duplicate ?? 0,
    reorder: input.reorder ?? 0,
    bad_signature: input.bad_signature ?? 0,
    stale_timestamp: input.stale_timestamp ?? 0,
    delay_ms: input.delay_ms ?? null,
    // Shown, so that a run without one can be repeated.
    seed: input.seed ?? randomInt(0, 2 ** 31 - 1),
  };
  return updateChaos(accountId, id, { chaos, chaos_report: { ...EMPTY_CHAOS_REPORT } });
}

/** Chaos off; the report of the run that ended stays readable. */
export function clearWebhookChaos(accountId: string, id: string): Promise<WebhookChaosResource> {
  return updateChaos(accountId, id, { chaos: null });
}

export async function getWebhookChaos(accountId: string, id: string): Promise<WebhookChaosResource> {
  const doc = await WebhookEndpointModel.findOne({ _id: id, account_id: accountId }, PROJECTION).lean();
  if (!doc) throw ApiError.notFound('webhook endpoint', id);
  return toWebhookChaosResource(doc);
}

/** Moves the report's counters: `$inc`, so that every process and thread adds to the same numbers. */
export async function countChaos(endpointId: string, counters: Partial<ChaosReport>): Promise<void> {
  const inc = Object.fromEntries(Object.entries(counters).map(([k, v]) => [`chaos_report.${k}`, v]));
  if (Object.keys(inc).length > 0) await WebhookEndpointModel.updateOne({ _id: endpointId }, { $inc: inc });
}
