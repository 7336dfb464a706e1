import type { Config } from '../config';
import { authenticationFailed } from '../domain/accounts/apiKeyService';
import { ApiError } from '../errors';
import { countOperations, type Admission, type Client } from '../operations/admit';
import { countPublicCall, type RateCount } from '../operations/rateLimitPolicy';
import type { OperationId } from '../operations/contract';
import { checkClientTokenOperation } from './clientTokenScope';
import { getOperationAST, type DocumentNode } from './graphqljs';
import { publicCalls, publicFieldNamed } from './publicOperations';
import type { GraphQLRequestParams } from './requestParams';

/**
 * GraphQL's side of admission (src/operations/admit.ts), the same for HTTP POST, HTTP GET and
 * WebSocket: every rule is applied to the document that runs, whatever way it arrived (its text, or an
 * automatic persisted query's hash resolved first: requestParams.ts), so that no way round a rule is
 * left open.
 */

/** Mutation fields one operation may hold (aliases included): each is a request of its own. */
export const MAX_MUTATION_FIELDS = 10;

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
    throw ApiError.invalid(`Too many mutations: ${mutationFields} mutation fields in one operation, at most ${MAX_MUTATION_FIELDS} (each counts as a request)`);
  }
  const caller = admission.caller;
  if (caller.kind === 'clientToken' && operation) checkClientTokenOperation(document, params.operationName, params.variables, caller.grant);
  if (caller.kind === 'public' && !(calls?.onlyPublic && calls.calls.length > 0)) throw authenticationFailed();
  const publicCallsLeft = [...(calls?.calls ?? [])];
  if (precounted !== undefined && publicCallsLeft.includes(precounted)) publicCallsLeft.splice(publicCallsLeft.indexOf(precounted), 1);
  return countOperations(admission, { requests: Math.max(1, mutationFields), publicCalls: publicCallsLeft }, client, config);
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
