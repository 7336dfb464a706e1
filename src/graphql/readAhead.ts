import { beforeCountOf, type BeforeCount } from '../operations/prefetch';
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
