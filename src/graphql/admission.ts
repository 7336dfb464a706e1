import type { Config } from '../config';
import { authenticationFailed } from '../domain/accounts/apiKeyService';
import { ApiError } from '../errors';
import { MAX_DOCUMENT_TOKENS, sha256Hex } from '../domain/graphqlDocuments/manifest';
import { countOperations, type Admission, type Client } from '../operations/admit';
import { beforeCountOf, type BeforeCount } from '../operations/prefetch';
import { countPublicCall, type RateCount } from '../operations/rateLimitPolicy';
import type { OperationId } from '../operations/contract';
import { checkClientTokenOperation, createClientTokenContext } from './clientTokenScope';
import { createContext, createKeylessContext, type GraphQLContext } from './context';
import { keepDocument, parseDocument, parsedDocument } from './documentCache';
import { getOperationAST, Kind, type DocumentNode } from './graphqljs';
import { publicCalls, publicFieldNamed } from './publicOperations';
import { recallQuery, rememberQuery } from './persistedQueries';
import { isKnownRefusal } from './refusedDocuments';
import { checkRequestJsonDepth } from './requestDepth';
import type { GatewayRuntime } from '../domain/gatewayRuntime';

/**
 * GraphQL's side of admission (src/operations/admit.ts), the same for HTTP POST, HTTP GET and
 * WebSocket: the request's document is resolved first (query text, or an automatic persisted query's
 * hash looked up in the caller's account), and every rule is applied to that document, whatever way it
 * arrived: a client token's scope, the public calls of a keyless request, one count per mutation field.
 */

/** Mutation fields one operation may hold (aliases included): each is a request of its own. */
export const MAX_MUTATION_FIELDS = 10;
/**
 * Brackets (`{`, `(`, `[`) one document may nest. The depth limit (limits.ts: 8 fields; GraphiQL's
 * introspection nests about 20 brackets) is checked on the parsed document; this one keeps a document
 * nested thousands deep from reaching graphql-js's recursive parser at all.
 */
export const MAX_NESTING = 64;
/**
 * Tokens graphql-js reads from an authenticated caller's document before it gives up (a 64 KiB body
 * holds up to ~32,000). Parsing is the part of a refusal no cache can skip the first time a text is
 * seen, and it costs about 1 µs per token: 5,000 keeps a new refused document to a few ms of CPU. The
 * dashboard's largest operation has 235 tokens, GraphiQL's introspection query ~700.
 */
export const MAX_TOKENS = MAX_DOCUMENT_TOKENS;
/**
 * Tokens of a keyless request's document (its public calls: ten aliased createSandboxAccount calls with
 * their selections are some 200): parsing stops there, so that a request without a key costs at most
 * this much parsing (~0.5 MB of short-lived heap), whatever its length.
 */
export const KEYLESS_MAX_TOKENS = 1_000;
/**
 * Bytes of a keyless request's body (its document, variables and name): 1,000 tokens of public calls
 * fit in a few KiB. A longer body is the 401 of a request without a key, refused before it is
 * buffered, so that a flood of large keyless bodies leaves no strings to collect.
 */
export const KEYLESS_MAX_BODY_BYTES = 16 * 1024;

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

const invalid = (message: string) => ApiError.invalid(message);

/**
 * A POST body or a WebSocket `subscribe` payload, checked for shape and depth (400 `invalid_request`,
 * the body reader's own depth refusal, whatever the transport: requestDepth.ts).
 */
export function requestParams(body: unknown): GraphQLRequestParams {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid('The request body must be a JSON object: {"query": "...", "variables": {...}}');
  }
  checkRequestJsonDepth(body);
  const { query, operationName, variables, extensions, documentId } = body as Record<string, unknown>;
  if (query !== undefined && query !== null && typeof query !== 'string') throw invalid("'query' must be a string");
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') throw invalid("'operationName' must be a string");
  if (variables !== undefined && variables !== null && !isObject(variables)) throw invalid("'variables' must be an object");
  if (extensions !== undefined && extensions !== null && !isObject(extensions)) throw invalid("'extensions' must be an object");
  if (documentId !== undefined && documentId !== null && (typeof documentId !== 'string' || documentId.length > 200)) throw invalid("'documentId' must be a string: 'sha256:<hex>'");
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
    if (typeof value !== 'string') throw invalid(`The query parameter '${name}' may be given once`);
    return value;
  };
  const json = (name: string): unknown => {
    const text = one(name);
    if (text === undefined || text === '') return undefined;
    try {
      return JSON.parse(text);
    } catch {
      throw invalid(`The query parameter '${name}' must be JSON`);
    }
  };
  return requestParams({ query: one('query'), operationName: one('operationName'), variables: json('variables'), extensions: json('extensions'), documentId: one('documentId') });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const NOT_FOUND = 'PersistedQueryNotFound';
const persistedQueryNotFound = () => invalid(`${NOT_FOUND}: no query with this sha256Hash was sent with these credentials; send it again with its text`);

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
    if (params.query === undefined) throw invalid("Send the operation as 'query', or a trusted document's 'documentId', or an automatic persisted query's sha256Hash in extensions.persistedQuery");
    return params.query;
  }
  const { version, sha256Hash } = (isObject(apq) ? apq : {}) as { version?: unknown; sha256Hash?: unknown };
  if (version !== 1) throw invalid('extensions.persistedQuery.version must be 1');
  if (typeof sha256Hash !== 'string' || !/^[0-9a-f]{64}$/i.test(sha256Hash)) throw invalid('extensions.persistedQuery.sha256Hash must be a SHA-256 hex digest');
  const hash = sha256Hash.toLowerCase();
  if (params.query === undefined) {
    const known = recallQuery(scope, hash);
    if (known === undefined) throw persistedQueryNotFound();
    return known;
  }
  if (sha256Hex(params.query) !== hash) throw invalid('extensions.persistedQuery.sha256Hash is not the SHA-256 of the query sent with it');
  rememberQuery(scope, hash, params.query);
  return params.query;
}

/**
 * Parses a query text, refused as `invalid_request` when it is not GraphQL or nests deeper than
 * MAX_NESTING (before graphql-js's recursive descent could overflow the stack). Parsed documents are
 * shared by text (documentCache.ts); `keep` (the caller is authenticated and counted) lets this one be
 * kept for the next request.
 */
export function parseQuery(query: string, keep: boolean, maxTokens = MAX_TOKENS): DocumentNode {
  const parsed = parsedDocument(query);
  if (parsed) return parsed;
  const nesting = bracketNesting(query);
  if (nesting > MAX_NESTING) throw invalid(`Query nested too deeply: ${nesting} levels of brackets, at most ${MAX_NESTING}`);
  try {
    return parseDocument(query, { maxTokens }, keep);
  } catch (err) {
    // graphql-js's GraphQLError names the position; anything else is the engine's and stays here.
    const message = err instanceof Error && err.name === 'GraphQLError' ? err.message : 'Query could not be parsed';
    throw invalid(message);
  }
}

/** The deepest bracket nesting of a GraphQL text, strings and comments left out. */
export function bracketNesting(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x28 || c === 0x5b) {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (c === 0x7d || c === 0x29 || c === 0x5d) {
      if (depth > 0) depth--;
    } else if (c === 0x23) {
      // A comment runs to the end of its line.
      while (i < text.length && text.charCodeAt(i) !== 0x0a && text.charCodeAt(i) !== 0x0d) i++;
    } else if (c === 0x22) {
      if (text.startsWith('"""', i)) {
        const end = text.indexOf('"""', i + 3);
        i = end === -1 ? text.length : end + 2;
      } else {
        for (i++; i < text.length; i++) {
          const s = text.charCodeAt(i);
          if (s === 0x5c) i++;
          else if (s === 0x22 || s === 0x0a || s === 0x0d) break;
        }
      }
    }
  }
  return deepest;
}

/**
 * The rules of the document that runs, for the caller `authenticate` found: at most MAX_MUTATION_FIELDS
 * mutation fields, each counted as one request; a client token runs only its payment's public view
 * (403/401 otherwise); a request without credentials runs public fields only (401 otherwise), each
 * counted in its per-IP bucket. Returns the count to report (X-RateLimit-*), the 429 to answer when it
 * is over its limit; throws the other refusals.
 * An operation name that selects nothing is left to graphql-js, which answers it (counted as one).
 */
export async function admitDocument(
  admission: Admission,
  document: DocumentNode,
  params: Pick<GraphQLRequestParams, 'operationName' | 'variables'>,
  client: Client,
  config: Config,
  precounted?: OperationId,
): Promise<RateCount | null> {
  const operation = getOperationAST(document, params.operationName);
  const calls = operation ? publicCalls(document, params.operationName) : null;
  const mutationFields = operation?.operation === 'mutation' ? (calls?.fields ?? 0) : 0;
  if (mutationFields > MAX_MUTATION_FIELDS) {
    throw invalid(`Too many mutations: ${mutationFields} mutation fields in one operation, at most ${MAX_MUTATION_FIELDS} (each counts as a request)`);
  }
  const caller = admission.caller;
  if (caller.kind === 'clientToken' && operation) checkClientTokenOperation(document, params.operationName, params.variables, caller.grant);
  if (caller.kind === 'public' && !(calls?.onlyPublic && calls.calls.length > 0)) throw authenticationFailed();
  const publicCallsLeft = [...(calls?.calls ?? [])];
  if (precounted !== undefined && publicCallsLeft.includes(precounted)) publicCallsLeft.splice(publicCallsLeft.indexOf(precounted), 1);
  return countOperations(admission, { requests: Math.max(1, mutationFields), publicCalls: publicCallsLeft }, client, config);
}

/** The resolvers' context for the admitted caller (`ws`: one context serves every message of a subscription). */
export function contextOf(
  admission: Admission,
  requestId: string,
  gateway: { config: Config; runtime: GatewayRuntime },
  ip: string,
  transport: 'http' | 'ws' = 'http',
): GraphQLContext {
  const caller = admission.caller;
  const { config, runtime } = gateway;
  if (caller.kind === 'clientToken') return createClientTokenContext(caller, requestId, config, runtime, ip);
  if (caller.kind === 'public' || !admission.auth) return createKeylessContext(requestId, config, runtime, ip);
  return createContext(admission.auth, requestId, config, runtime, ip, transport);
}

/** What readAheadOfRequest read: the request's text, parsed (not kept: the caller is not counted yet). */
export interface ParsedAhead {
  query: string;
  document: DocumentNode;
  /** The intent a `paymentIntent(id)` query reads, started beside the key's count. */
  read?: { id: string; ahead: BeforeCount<'getPaymentIntent'> };
}

/**
 * The intent a `paymentIntent(id)` query reads, started beside the key's count as REST's GET starts it
 * (operations/prefetch.ts): found in the request's own text before anything is counted, so only for a
 * query sent as text (a hash alone is looked up in the account, once it is known), and only for a key
 * this process knows (the shell asks countsKnownKeyAtOnce): an unknown secret has nothing parsed before
 * its 401. The document is handed on (keepParsedAhead) rather than kept here. Undefined for a request
 * that cannot be read (admission answers it as it would).
 */
export function readAheadOfRequest(body: unknown): ParsedAhead | undefined {
  let params: GraphQLRequestParams;
  let document: DocumentNode;
  try {
    params = requestParams(body);
    if (params.query === undefined || isKnownRefusal(params.query, params.operationName)) return undefined;
    document = parseQuery(params.query, false);
  } catch {
    return undefined;
  }
  const parsed: ParsedAhead = { query: params.query, document };
  const operation = getOperationAST(document, params.operationName);
  if (operation?.operation !== 'query') return parsed;
  const field = operation.selectionSet.selections.find((s) => s.kind === Kind.FIELD && s.name.value === 'paymentIntent');
  if (field?.kind !== Kind.FIELD) return parsed;
  const value = field.arguments?.find((a) => a.name.value === 'id')?.value;
  const id = value?.kind === Kind.STRING ? value.value : value?.kind === Kind.VARIABLE ? params.variables?.[value.name.value] : undefined;
  if (typeof id !== 'string') return parsed;
  const ahead = beforeCountOf('getPaymentIntent', { id });
  return ahead ? { ...parsed, read: { id, ahead } } : parsed;
}

/** The document of `query` for an authenticated, counted caller: the one parsed ahead, now kept, or parsed here. */
export function documentOfCounted(query: string, parsed: ParsedAhead | undefined): DocumentNode {
  if (parsed?.query !== query) return parseQuery(query, true);
  keepDocument(query, parsed.document);
  return parsed.document;
}

/**
 * A keyless request's text, before it is parsed: it may only call public fields, and a document calls
 * a field by writing its name, so a text that names none is the 401 of a request without a key, read no
 * further. One that names one is counted in that field's per-IP bucket first (the count admitDocument
 * then leaves out: `precounted`), so that an address over its allowance is not parsed either.
 */
export async function countKeylessText(query: string, client: Client, config: Config): Promise<{ count: RateCount; precounted: OperationId }> {
  const precounted = publicFieldNamed(query);
  if (precounted === undefined) throw authenticationFailed();
  return { count: await countPublicCall(precounted, client.ip, config), precounted };
}

/**
 * Hands a read started ahead to the request's loader, as the account's: another account's intent is a
 * missing one, as the loader's own read (readPaymentsOfAccount) would answer.
 */
export function primeReadAhead(context: GraphQLContext, accountId: string, started: ParsedAhead['read']): void {
  const read = started?.ahead.read;
  if (!started || !read) return;
  const own = read.then((p) => (p && p.account_id === accountId ? p : null));
  own.catch(() => undefined); // read only if a resolver asks for it
  context.loaders.paymentRecord.prime(started.id, own);
}
