import { HeaderMap } from '@apollo/server';
import { GraphQLError, type GraphQLFormattedError } from './graphqljs';
import { ApiError, isApiError } from '../errors';
import { logger } from '../logger';
import { unavailableError } from '../db/unavailable';

/**
 * The one place GraphQL turns errors into responses, like rest/errorHandler.ts for REST:
 * - an ApiError keeps its stable REST code in `extensions.code` and its message;
 * - a request the GraphQL layer itself refuses (syntax, unknown field, wrong argument type, bad
 *   variables) is `invalid_request`, with graphql-js's message, which names the field;
 * - anything else is `internal_error` with a generic message: no message, stack or path detail of the
 *   fault leaves the server (it goes to the log with the request id).
 * `extensions.request_id` is added per request (see withRequestId).
 */

/** Codes Apollo and graphql-js give to requests that are malformed (the client's fault). */
const CLIENT_ERROR_CODES: ReadonlySet<string> = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'OPERATION_RESOLUTION_FAILURE',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
]);

const INTERNAL_MESSAGE = 'An internal error occurred. Retry with the same idempotencyKey.';

/** The exception behind a GraphQLError (resolver errors wrap it; so do refusals made outside resolvers). */
function underlying(error: unknown): unknown {
  let current = error;
  for (let i = 0; i < 5 && current instanceof GraphQLError && current.originalError; i++) current = current.originalError;
  return current;
}

/** What a thrown value means for the client: its code and the message it may see. */
export function classifyError(formatted: GraphQLFormattedError, error: unknown): { code: string; message: string; internal: boolean } {
  const original = underlying(error);
  if (isApiError(original)) return { code: original.code, message: original.message, internal: false };
  const unavailable = unavailableError(original);
  if (unavailable) return { code: unavailable.code, message: unavailable.message, internal: false };
  const apolloCode = formatted.extensions?.code;
  // graphql-js errors without an underlying exception: syntax, validation, argument coercion.
  const isClientError =
    (typeof apolloCode === 'string' && CLIENT_ERROR_CODES.has(apolloCode)) ||
    (original instanceof GraphQLError && !original.originalError && original.path === undefined && apolloCode === undefined);
  if (isClientError) return { code: 'invalid_request', message: formatted.message, internal: false };
  return { code: 'internal_error', message: INTERNAL_MESSAGE, internal: true };
}

/** Apollo's `formatError` (and graphql-ws's, via formatErrors below). */
export function formatGraphQLError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const { code, message } = classifyError(formatted, error);
  const out: GraphQLFormattedError = { message, extensions: { code } };
  // Where the error happened in the operation is safe to show, and helps find the failing field.
  if (formatted.locations) Object.assign(out, { locations: formatted.locations });
  if (formatted.path) Object.assign(out, { path: formatted.path });
  return out;
}

/** Adds the request id to each error. */
export function withRequestId(errors: readonly GraphQLFormattedError[], requestId: string): GraphQLFormattedError[] {
  return errors.map((e) => ({ ...e, extensions: { ...(e.extensions ?? {}), request_id: requestId } }));
}

export function logInternalErrors(errors: readonly GraphQLError[], requestId: string): void {
  for (const err of errors) {
    if (!classifyError(err.toJSON(), err).internal) continue;
    logger.error({ err: underlying(err), requestId, path: err.path }, 'graphql: unhandled error');
  }
}

/** For graphql-ws: format a batch of GraphQLErrors as the HTTP endpoint would. */
export function formatErrors(errors: readonly GraphQLError[], requestId: string): GraphQLFormattedError[] {
  logInternalErrors(errors, requestId);
  return withRequestId(
    errors.map((e) => formatGraphQLError(e.toJSON(), e)),
    requestId,
  );
}

/**
 * A GraphQLError carrying an ApiError, for refusals made outside resolvers (limits, rate limit): Apollo
 * answers HTTP with its status and headers (Retry-After of a 429).
 */
export function apiGraphQLError(err: ApiError): GraphQLError {
  const headers = new HeaderMap(Object.entries(err.headers));
  return new GraphQLError(err.message, { originalError: err, extensions: { code: err.code, http: { status: err.status, headers } } });
}

/** The body of an HTTP answer refused before GraphQL runs (authentication, rate limit, body). */
export function errorResponseBody(err: ApiError, requestId: string): { errors: GraphQLFormattedError[] } {
  return { errors: [{ message: err.message, extensions: { code: err.code, request_id: requestId } }] };
}
