import { findByFieldBatched } from '../../db/batching';
import { AccountModel } from '../accounts/accountModel';
import { WebhookEndpointModel, type WebhookEndpointRecord } from './webhookEndpointModel';
import { machineBase } from '../../platform/clock/machineClock';

/**
 * The webhook endpoints of the accounts this process delivers for, so that an event costs no read of them.
 * Every change to an account's endpoints bumps its `endpoints_version` once written; the delivery path reads
 * the version with the account anyway, and reads the endpoints again when it differs or the entry is older
 * than FRESH_MS. Why that is enough: docs/decisions/notes/webhooks.md, "The endpoint cache".
 */
const FRESH_MS = 5_000;
const MAX_ACCOUNTS = 10_000;

interface Entry {
  version: number;
  readAt: number;
  endpoints: WebhookEndpointRecord[];
}

// Shared by the gateways of a process: a copy of the database's endpoints, each read checked against
// the account's endpoints_version, so a gateway never serves another's stale copy.
// eslint-disable-next-line no-restricted-syntax -- a cache of the database, versioned
const cache = new Map<string, Entry>();

/** The account's endpoints as of `version` (its `endpoints_version` as just read, 0 when absent) or later. */
export async function accountEndpoints(accountId: string, version: number, nowMs: number = Date.now()): Promise<WebhookEndpointRecord[]> {
  // The entry's age on the monotonic clock (src/platform/clock/machineClock.ts): a step of the wall
  // clock neither keeps it for an hour nor drops it.
  const mono = nowMs - machineBase();
  const hit = cache.get(accountId);
  if (hit && hit.version === version && mono - hit.readAt < FRESH_MS) return hit.endpoints;
  // All of the account's endpoints, in one query batched with concurrent events' (filtered by the caller).
  const endpoints = await findByFieldBatched<WebhookEndpointRecord>(WebhookEndpointModel, 'account_id', accountId);
  cache.delete(accountId);
  if (cache.size >= MAX_ACCOUNTS) cache.delete(cache.keys().next().value!);
  cache.set(accountId, { version, readAt: mono, endpoints });
  return endpoints;
}

/** Called after every write that changes an account's endpoints: every process reads them again. */
export async function bumpEndpointsVersion(accountId: string): Promise<void> {
  cache.delete(accountId);
  await AccountModel.updateOne({ _id: accountId }, { $inc: { endpoints_version: 1 } });
}
