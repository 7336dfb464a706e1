import { sha256Hex } from '../domain/graphqlDocuments/manifest';
import { ApiError } from '../errors';
import { recallQuery, rememberQuery } from './persistedQueries';
import { checkRequestJsonDepth } from './requestDepth';

/** One GraphQL request as sent, over any transport. */
export interface GraphQLRequestParams {
  query?: string;
  operationName?: string;
  variables?: Record<string, unknown>;
  /** `persistedQuery: {version: 1, sha256Hash}` of an automatic persisted query. */
  extensions?: Record<string, unknown>;
  /** `sha256:<hex>` of a trusted document (GraphQL over HTTP, persisted documents): trustedDocuments.ts. */
  documentId?: string;
}

/**
 * A POST body or a WebSocket `subscribe` payload, checked for shape and depth (400 `invalid_request`,
 * the body reader's own depth refusal, whatever the transport: requestDepth.ts).
 */
export function requestParams(body: unknown): GraphQLRequestParams {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw ApiError.invalid('The request body must be a JSON object: {"query": "...", "variables": {...}}');
  }
  checkRequestJsonDepth(body);
  const { query, operationName, variables, extensions, documentId } = body as Record<string, unknown>;
  if (query !== undefined && query !== null && typeof query !== 'string') throw ApiError.invalid("'query' must be a string");
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') throw ApiError.invalid("'operationName' must be a string");
  if (variables !== undefined && variables !== null && !isObject(variables)) throw ApiError.invalid("'variables' must be an object");
  if (extensions !== undefined && extensions !== null && !isObject(extensions)) throw ApiError.invalid("'extensions' must be an object");
  if (documentId !== undefined && documentId !== null && (typeof documentId !== 'string' || documentId.length > 200)) throw ApiError.invalid("'documentId' must be a string: 'sha256:<hex>'");
  return {
    query: typeof query === 'string' && query !== '' ? query : undefined,
    operationName: typeof operationName === 'string' ? operationName : undefined,
    variables: isObject(variables) ? variables : undefined,
    extensions: isObject(extensions) ? extensions : undefined,
    documentId: typeof documentId === 'string' ? documentId : undefined,
  };
}

/** `GET /graphql?query=…&variables=…&operationName=…&extensions=…` (variables and extensions JSON-encoded). */
export function requestParamsOfSearch(search: Record<string, unknown>): GraphQLRequestParams {
  const one = (name: string): string | undefined => {
    const value = search[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') throw ApiError.invalid(`The query parameter '${name}' may be given once`);
    return value;
  };
  const json = (name: string): unknown => {
    const text = one(name);
    if (text === undefined || text === '') return undefined;
    try {
      return JSON.parse(text);
    } catch {
      throw ApiError.invalid(`The query parameter '${name}' must be JSON`);
    }
  };
  return requestParams({ query: one('query'), operationName: one('operationName'), variables: json('variables'), extensions: json('extensions'), documentId: one('documentId') });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const NOT_FOUND = 'PersistedQueryNotFound';
const persistedQueryNotFound = () => ApiError.invalid(`${NOT_FOUND}: no query with this sha256Hash was sent with these credentials; send it again with its text`);

/** The 400 an unknown hash gets: APQ clients send the text again on it, keyless ones too (they store nothing). */
export function isPersistedQueryNotFound(err: unknown): boolean {
  return err instanceof ApiError && err.message.startsWith(NOT_FOUND);
}

/**
 * The query text the request runs: its own, or the persisted one its hash names in `scope`. A hash that
 * does not match the text sent with it, an unknown hash, or an unsupported version is 400
 * `invalid_request` (the message of an unknown hash starts with `PersistedQueryNotFound`, the word APQ
 * clients look for before they send the text again).
 */
export function resolveQueryText(params: GraphQLRequestParams, scope: string | null): string {
  const apq = params.extensions?.persistedQuery;
  if (apq === undefined || apq === null) {
    if (params.query === undefined) throw ApiError.invalid("Send the operation as 'query', or a trusted document's 'documentId', or an automatic persisted query's sha256Hash in extensions.persistedQuery");
    return params.query;
  }
  const { version, sha256Hash } = (isObject(apq) ? apq : {}) as { version?: unknown; sha256Hash?: unknown };
  if (version !== 1) throw ApiError.invalid('extensions.persistedQuery.version must be 1');
  if (typeof sha256Hash !== 'string' || !/^[0-9a-f]{64}$/i.test(sha256Hash)) throw ApiError.invalid('extensions.persistedQuery.sha256Hash must be a SHA-256 hex digest');
  const hash = sha256Hash.toLowerCase();
  if (params.query === undefined) {
    const known = recallQuery(scope, hash);
    if (known === undefined) throw persistedQueryNotFound();
    return known;
  }
  if (sha256Hex(params.query) !== hash) throw ApiError.invalid('extensions.persistedQuery.sha256Hash is not the SHA-256 of the query sent with it');
  rememberQuery(scope, hash, params.query);
  return params.query;
}
