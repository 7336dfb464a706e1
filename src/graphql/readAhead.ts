import type { ReadAhead } from '../operations/prefetch';
import type { GraphQLContext } from './context';
import { keepDocument } from './documentCache';
import { getOperationAST, Kind, type DocumentNode } from './graphqljs';
import { parseQuery } from './parseQuery';
import { isKnownRefusal } from './refusedDocuments';
import { requestParams, type GraphQLRequestParams } from './requestParams';

/** What readAheadOfRequest read: the request's text, parsed (not kept: the caller is not counted yet). */
export interface ParsedAhead {
  query: string;
  document: DocumentNode;
  /** The read of a `paymentIntent(id)` query, for admission to start beside the key's count. */
  read?: ReadAhead;
}

/**
 * The read of a `paymentIntent(id)` query, the operation its field mirrors (getPaymentIntent) keyed by
 * the id, for admission to start beside the key's count as it does REST's GET (operations/prefetch.ts).
 * Found in the request's own text before anything is counted: only for a query sent as text, and only
 * for a key this process knows (the shell asks countsKnownKeyAtOnce). The document is handed on
 * (documentOfCounted), not kept here. Undefined for a request that cannot be read.
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
  return { ...parsed, read: { operationId: 'getPaymentIntent', params: { id } } };
}

/** The document of `query` for an authenticated, counted caller: the one parsed ahead, now kept, or parsed here. */
export function documentOfCounted(query: string, parsed: ParsedAhead | undefined): DocumentNode {
  if (parsed?.query !== query) return parseQuery(query, true);
  keepDocument(query, parsed.document);
  return parsed.document;
}

/**
 * Hands the read admission started (context.ahead) to the request's loader, as the account's: another
 * account's intent is a missing one, as the loader's own read (readPaymentsOfAccount) would answer.
 */
export function primeReadAhead(context: GraphQLContext): void {
  const ahead = context.ahead;
  if (ahead?.operationId !== 'getPaymentIntent' || typeof ahead.params.id !== 'string') return;
  const accountId = context.actor.accountId;
  const own = ahead.read.then((p) => (p && p.account_id === accountId ? p : null));
  own.catch(() => undefined); // read only if a resolver asks for it
  context.loaders.paymentRecord.prime(ahead.params.id, own);
}
