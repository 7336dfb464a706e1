import type { components } from '../../../generated/openapi';
import { driverCollection } from '../../db/driverCollection';
import { ApiError } from '../../errors';
import { ACCOUNT_CAPS, capReached } from '../accountCaps';
import { nowForAccount } from '../clock/accountTime';
import { ExpiringCache } from './expiringCache';
import { hashOfId, readManifest, type ManifestDocument } from './manifest';
import { TrustedDocumentModel, trustedDocumentKey, type TrustedDocumentRecord } from './trustedDocumentModel';

type GraphqlDocument = components['schemas']['GraphqlDocument'];

const documents = () => driverCollection<TrustedDocumentRecord>(TrustedDocumentModel);

/**
 * What a request's lookup found, by `<account>:<hash>`: the text, or null for a document the account
 * has not registered. Kept 5 s (the contract's "within 5 seconds on every other process" of a
 * deletion), so that an account's frontends running the same few documents read each one about once
 * in 5 s per process, and bounded: 20,000 entries and 16 MiB (texts count two bytes a character).
 */
const LOOKUP_TTL_MS = 5_000;
// eslint-disable-next-line no-restricted-syntax -- a cache of what the database holds, keyed by account: shared by the gateways on it
const lookups = new ExpiringCache<string | null>(LOOKUP_TTL_MS, 20_000, 16 * 2 ** 20, (text) => 64 + 2 * (text?.length ?? 0));

export const toGraphqlDocumentResource = (d: Pick<TrustedDocumentRecord, 'hash' | 'name' | 'type' | 'created_at'>): GraphqlDocument => ({
  object: 'graphql_document',
  id: `sha256:${d.hash}`,
  name: d.name,
  type: d.type,
  created_at: d.created_at.toISOString(),
});

/**
 * Registers a manifest's documents (manifest.ts checks them all first: whole or nothing), within the
 * account's cap, and answers them as stored (a document registered before keeps its first created_at).
 * The cap holds under concurrency as createWithinCap's does: insert, count, and over the cap take back
 * what this call inserted.
 */
export async function registerTrustedDocuments(accountId: string, manifest: components['schemas']['GraphqlDocumentManifest']): Promise<GraphqlDocument[]> {
  const sent = readManifest(manifest);
  const ids = sent.map((d) => trustedDocumentKey(accountId, d.hash));
  const known = new Set((await documents().find({ _id: { $in: ids } }, { projection: { _id: 1 } }).toArray()).map((d) => d._id));
  const fresh = sent.filter((d) => !known.has(trustedDocumentKey(accountId, d.hash)));
  if (fresh.length > 0) {
    const now = await nowForAccount(accountId);
    const records = fresh.map((d) => recordOf(accountId, d, now));
    // Another process may register the same documents meanwhile: its copy is as good as this one.
    const inserted = await insertNew(records);
    const held = await documents().countDocuments({ account_id: accountId });
    if (held > ACCOUNT_CAPS.graphqlDocuments) {
      await documents().deleteMany({ _id: { $in: inserted } });
      throw capReached('graphqlDocuments');
    }
  }
  for (const id of ids) lookups.delete(id);
  const stored = await documents().find({ _id: { $in: ids } }).toArray();
  const byId = new Map(stored.map((d) => [d._id, d]));
  return ids.flatMap((id) => {
    const d = byId.get(id);
    return d ? [toGraphqlDocumentResource(d)] : [];
  });
}

function recordOf(accountId: string, d: ManifestDocument, now: Date): TrustedDocumentRecord {
  return { _id: trustedDocumentKey(accountId, d.hash), account_id: accountId, hash: d.hash, name: d.name, type: d.type, body: d.body, created_at: now };
}

/** Inserts what is not stored yet; the ids this call inserted (a duplicate another process stored first is left out). */
async function insertNew(records: TrustedDocumentRecord[]): Promise<string[]> {
  try {
    await documents().insertMany(records, { ordered: false });
    return records.map((r) => r._id);
  } catch (err) {
    const writeErrors = (err as { writeErrors?: Array<{ code?: number; index?: number }> }).writeErrors;
    if (!Array.isArray(writeErrors) || writeErrors.some((e) => e.code !== 11000)) throw err;
    const duplicated = new Set(writeErrors.map((e) => e.index));
    return records.filter((_r, i) => !duplicated.has(i)).map((r) => r._id);
  }
}

/** A page of the account's documents, newest first, after `startingAfter` (an id of one of them). */
export async function listTrustedDocuments(accountId: string, limit: number, startingAfter: string | undefined): Promise<GraphqlDocument[]> {
  let filter: Record<string, unknown> = { account_id: accountId };
  if (startingAfter !== undefined) {
    const hash = hashOfId(startingAfter);
    const after = hash && (await documents().findOne({ _id: trustedDocumentKey(accountId, hash) }, { projection: { created_at: 1 } }));
    if (!after) throw ApiError.invalid(`Invalid 'starting_after': no document '${startingAfter}' in this account`);
    filter = { ...filter, $or: [{ created_at: { $lt: after.created_at } }, { created_at: after.created_at, _id: { $lt: after._id } }] };
  }
  const page = await documents()
    .find(filter, { projection: { body: 0 } })
    .sort({ created_at: -1, _id: -1 })
    .limit(limit)
    .toArray();
  return page.map(toGraphqlDocumentResource);
}

/** Removes one document; this process forgets it at once, the others within LOOKUP_TTL_MS. */
export async function deleteTrustedDocument(accountId: string, id: string): Promise<{ id: string; object: 'graphql_document'; deleted: true }> {
  const hash = hashOfId(id);
  const key = hash && trustedDocumentKey(accountId, hash);
  const removed = key ? await documents().deleteOne({ _id: key }) : undefined;
  if (!key || !removed?.deletedCount) throw ApiError.notFound('graphql document', id);
  lookups.delete(key);
  return { id: `sha256:${hash}`, object: 'graphql_document', deleted: true };
}

/**
 * The text of the account's document with this SHA-256 (hex, lower case), or null when the account has
 * none: what a request by id runs, and whether a text sent whole is trusted.
 */
export async function trustedDocumentText(accountId: string, hash: string): Promise<string | null> {
  const key = trustedDocumentKey(accountId, hash);
  const cached = lookups.get(key);
  if (cached !== undefined) return cached;
  const found = await documents().findOne({ _id: key }, { projection: { body: 1 } });
  const text = found?.body ?? null;
  lookups.set(key, text);
  return text;
}
