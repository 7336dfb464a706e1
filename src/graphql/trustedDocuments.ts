import { ApiError } from '../errors';
import { logger } from '../logger';
import type { Admission, Credentials } from '../operations/admit';
import type { Caller } from '../operations/caller';
import { trustedDocumentsModes, withDefaults, type CredentialKind, type TrustedDocumentsMode } from '../domain/graphqlDocuments/graphqlSettingsService';
import { hashOfId, sha256Hex } from '../domain/graphqlDocuments/manifest';
import { trustedDocumentText } from '../domain/graphqlDocuments/trustedDocumentService';
import { untrustedDocument } from '../metrics/domain';
import { isPersistedQueryNotFound, resolveQueryText, type GraphQLRequestParams } from './requestParams';
import { persistedQueryScope } from './persistedQueries';

/**
 * Trusted documents (contract decisions, "GraphQL as frontend clients expect it"): the text a request runs,
 * named by text, `documentId` or persisted-query hash, and what its caller may run under its account's mode
 * for its kind of credential (`off`, `audit`, `enforce`). A keyless caller is as `off` and stores nothing.
 * More: docs/decisions/notes/graphql.md, "Trusted documents".
 */
export async function resolveTrustedText(params: GraphQLRequestParams, admission: Admission, presented: Credentials['kind']): Promise<string> {
  const caller = admission.caller;
  if (caller.kind === 'public') {
    if (params.documentId !== undefined) throw notRegistered(params.documentId);
    return resolveQueryText(params, null);
  }
  const accountId = caller.actor.accountId;
  const kind = credentialKindOf(caller, presented);
  // A key's count read the account's modes with its clock (no read of its own); a client token's did not.
  const mode = (admission.account ? withDefaults(admission.account.graphql_trusted_documents) : await trustedDocumentsModes(accountId))[kind];
  if (params.documentId !== undefined) {
    const hash = hashOfId(params.documentId);
    if (hash === undefined || !params.documentId.startsWith('sha256:')) throw ApiError.invalid("'documentId' must be 'sha256:' and the SHA-256 (hex) of a trusted document's text");
    // Clients that send both (urql's and Hive's "both" modes) are held to their match.
    if (params.query !== undefined && sha256Hex(params.query) !== hash) throw ApiError.invalid("'documentId' is not the SHA-256 of the 'query' sent with it");
    const text = await trustedDocumentText(accountId, hash);
    if (text === null) throw notRegistered(params.documentId);
    return text;
  }
  const apqHash = persistedQueryHash(params);
  if (mode === 'off') {
    try {
      return resolveQueryText(params, persistedQueryScope(caller, presented));
    } catch (err) {
      // A hash alone this process has not seen: a trusted document of the account, if it is one.
      const text = apqHash !== undefined && params.query === undefined && isPersistedQueryNotFound(err) ? await trustedDocumentText(accountId, apqHash) : null;
      if (text === null) throw err;
      return text;
    }
  }
  if (params.query === undefined) {
    // A hash alone: a trusted document, or (audit) PersistedQueryNotFound, on which the client sends its text.
    const text = apqHash === undefined ? null : await trustedDocumentText(accountId, apqHash);
    if (text !== null) return text;
    if (mode === 'enforce' && apqHash !== undefined) throw refused(kind, mode, apqHash, params.operationName);
    return resolveQueryText(params, null);
  }
  const query = resolveQueryText(params, null); // checks a hash sent with the text; stores nothing
  const hash = sha256Hex(query);
  if ((await trustedDocumentText(accountId, hash)) !== null) return query;
  if (mode === 'enforce') throw refused(kind, mode, hash, params.operationName);
  reportUntrusted(kind, mode, hash, params.operationName);
  return query;
}

/** The kind of credential whose mode applies: a publishable key lives in browsers, as client tokens do. */
export function credentialKindOf(caller: Exclude<Caller, { kind: 'public' }>, presented: Credentials['kind']): CredentialKind {
  if (caller.kind === 'clientToken') return 'client_token';
  if (presented === 'session') return 'dashboard';
  switch (caller.key.type) {
    case 'secret':
      return 'secret_key';
    case 'restricted':
      return 'restricted_key';
    default:
      return 'client_token';
  }
}

function persistedQueryHash(params: GraphQLRequestParams): string | undefined {
  const apq = params.extensions?.persistedQuery;
  const hash = typeof apq === 'object' && apq !== null ? (apq as { sha256Hash?: unknown }).sha256Hash : undefined;
  return typeof hash === 'string' ? hashOfId(hash) : undefined;
}

const notRegistered = (id: string) =>
  ApiError.invalid(`GraphQL document not registered: '${id.slice(0, 80)}' is not one of this account's trusted documents (POST /v1/graphql/documents, or pgw documents push)`);

function refused(kind: CredentialKind, mode: TrustedDocumentsMode, hash: string, operationName: string | undefined): ApiError {
  reportUntrusted(kind, mode, hash, operationName);
  return ApiError.invalid(
    `GraphQL document not registered: this account runs only its trusted documents for ${kind} requests (mode enforce), and sha256:${hash} is not one; register it with POST /v1/graphql/documents or pgw documents push`,
  );
}

function reportUntrusted(kind: CredentialKind, mode: TrustedDocumentsMode, hash: string, operationName: string | undefined): void {
  untrustedDocument(kind)(mode).inc();
  logger.info({ credential: kind, mode, documentId: `sha256:${hash}`, operationName: operationName?.slice(0, 100) }, 'graphql: untrusted document');
}
