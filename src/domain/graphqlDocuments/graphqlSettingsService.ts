import type { components } from '../../../generated/openapi';
import { AccountModel, type AccountRecord } from '../accounts/accountModel';
import { driverCollection } from '../../db/driverCollection';
import { ApiError } from '../../errors';
import { ExpiringCache } from './expiringCache';

export type TrustedDocumentsMode = components['schemas']['TrustedDocumentsMode'];
export type CredentialKind = keyof components['schemas']['GraphqlSettings']['trusted_documents'];
export type TrustedDocumentsModes = Record<CredentialKind, TrustedDocumentsMode>;

/**
 * The contract's defaults: keys and the dashboard run any document; client tokens, which live in
 * browsers, run any too but the untrusted are counted and logged, so that an account sees what its
 * frontends send before it turns `enforce` on.
 */
export const DEFAULT_MODES: TrustedDocumentsModes = { secret_key: 'off', restricted_key: 'off', client_token: 'audit', dashboard: 'off' };

const accounts = () => driverCollection<AccountRecord>(AccountModel);

/**
 * Each account's modes as this process last read them, kept 5 s: a GraphQL request asks for its
 * caller's mode every time, and this keeps that to one small read per account per 5 s per process (a
 * PUT on this process takes effect at once; on another, within the 5 s the contract states).
 */
// eslint-disable-next-line no-restricted-syntax -- a cache of what the database holds, keyed by account: shared by the gateways on it
const modes = new ExpiringCache<TrustedDocumentsModes>(5_000, 50_000, 8 * 2 ** 20);

/** The modes of an account as stored (the kinds it never set have their default). */
export const withDefaults = (stored: Partial<TrustedDocumentsModes> | undefined): TrustedDocumentsModes => ({ ...DEFAULT_MODES, ...stored });

/**
 * An account's modes, for a caller whose count did not read them (a client token's count is its own):
 * from this process's memory, read again every 5 s. A key's count reads them with its clock, so keys
 * (and dashboard sessions) never come here.
 */
export async function trustedDocumentsModes(accountId: string): Promise<TrustedDocumentsModes> {
  const cached = modes.get(accountId);
  if (cached) return cached;
  const account = await accounts().findOne({ _id: accountId }, { projection: { graphql_trusted_documents: 1 } });
  const read = withDefaults(account?.graphql_trusted_documents);
  modes.set(accountId, read);
  return read;
}

export async function getGraphqlSettings(accountId: string): Promise<components['schemas']['GraphqlSettings']> {
  modes.delete(accountId);
  return { object: 'graphql_settings', trusted_documents: await trustedDocumentsModes(accountId) };
}

/** Changes the modes named (the validator has checked kinds and modes) and answers the settings after. */
export async function updateGraphqlSettings(
  accountId: string,
  body: components['schemas']['UpdateGraphqlSettingsRequest'],
): Promise<components['schemas']['GraphqlSettings']> {
  const set = Object.fromEntries(Object.entries(body.trusted_documents).map(([kind, mode]) => [`graphql_trusted_documents.${kind}`, mode]));
  if (Object.keys(set).length === 0) throw ApiError.invalid("'trusted_documents' must name at least one credential kind");
  const updated = await accounts().findOneAndUpdate({ _id: accountId }, { $set: set }, { returnDocument: 'after', projection: { graphql_trusted_documents: 1 } });
  if (!updated) throw ApiError.notFound('account', accountId);
  const now = withDefaults(updated.graphql_trusted_documents);
  modes.set(accountId, now);
  return { object: 'graphql_settings', trusted_documents: now };
}
