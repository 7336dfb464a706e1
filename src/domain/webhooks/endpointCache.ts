import { findByFieldBatched } from '../../db/batching';
import { AccountModel } from '../accounts/accountModel';
import { WebhookEndpointModel, type WebhookEndpointRecord } from './webhookEndpointModel';
import { machineBase } from '../../platform/clock/machineClock';

/**
 * The webhook endpoints of the accounts this process delivers for, so that an event costs no read of
 * them. Every change to an account's endpoints (create, delete, secret rotation) is followed by a bump of
 * the account's `endpoints_version` (bumpEndpointsVersion). The delivery path reads the account anyway
 * (its sandbox clock, for the delivery's time), with the version beside the offset, and reads the
 * endpoints again only when the version it finds is not the one it cached them under.
 *
 * Why that is enough: a version is bumped only after its change is written, so a reader that finds the
 * new version reads the endpoints after the change; a reader that still finds the old one uses the
 * endpoints as they were, as if its event came just before the change. A process that dies between a
 * change and its bump leaves the version behind it; entries older than FRESH_MS are read again anyway, so
 * that such a change is seen within seconds rather than at the account's next endpoint change.
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
