import { HeaderMap, type ApolloServer } from '@apollo/server';
import type { Request, RequestHandler, Response } from 'express';
import type { Config } from '../config';
import { authenticationFailed, countsKnownKeyAtOnce } from '../domain/accounts/apiKeyService';
import { ApiError, isApiError } from '../errors';
import { logger } from '../logger';
import { unavailableError } from '../db/unavailable';
import { authenticate, type Admission, type Credentials } from '../operations/admit';
import { bearerSecret } from '../operations/bearer';
import { applyAdmission } from '../http/authenticate';
import { readJsonBody } from '../http/body';
import { requireCsrfSafe, requireSameOriginIfSent, sessionCookieOf } from '../http/sessionCookie';
import { keepResponseBody, markDashboardRequest } from '../http/loggedBodies';
import { clientIp, countUnidentified } from '../http/rateLimit';
import { contextOf } from './callerContext';
import { admitDocument, countKeylessText } from './documentRules';
import { KEYLESS_MAX_BODY_BYTES, KEYLESS_MAX_TOKENS, parseQuery } from './parseQuery';
import { documentOfCounted, primeReadAhead, readAheadOfRequest, type ParsedAhead } from './readAhead';
import { isPersistedQueryNotFound, requestParams, requestParamsOfSearch, type GraphQLRequestParams } from './requestParams';
import { resolveTrustedText } from './trustedDocuments';
import { clientTokenOfHeader } from './clientTokenScope';
import { throwKnownRefusalFor } from './refusedDocuments';
import type { GraphQLContext } from './context';
import { errorResponseBody } from './errors';
import { maintenanceError } from '../http/maintenance';
import { deadlineError, deadlinePassed, responseTooLarge, startDeadline } from './executionLimits';
import { getOperationAST, type DocumentNode, type GraphQLSchema } from './graphqljs';
import { checkAdmittedOperation, markLimitsChecked } from './limits';
import { graphqlOperation } from '../metrics/domain';
import { streamSubscription } from './httpSubscriptions/run';
import type { HttpSubscriptions } from './httpSubscriptions/stream';
import type { GatewayRuntime } from '../domain/gatewayRuntime';
import type { ClientTokenStreams } from '../realtime/clientTokenStreams';

/**
 * `POST /graphql` and `GET /graphql?query=…` (no mutations): the same admission as every transport, then
 * the document's rules and limits, each refusal with the REST status and a GraphQL-shaped body; then
 * Apollo runs it, or httpSubscriptions/run.ts streams a subscription. More: docs/decisions/notes/graphql.md,
 * "GraphQL over HTTP".
 */
export function graphqlHttpHandler(
  config: Config,
  runtime: GatewayRuntime,
  schema: GraphQLSchema,
  apollo: () => Promise<ApolloServer<GraphQLContext>>,
  subscriptions: HttpSubscriptions,
  clientTokenStreams: ClientTokenStreams,
): RequestHandler {
  return async (req, res) => {
    const requestId = String(res.locals.requestId ?? '');
    try {
      if (config.maintenanceMode) throw maintenanceError();
      const client = { ip: clientIp(req) };
      const credentials = httpCredentials(req, config);
      // The POST of a key this process knows is read first: the intent it asks for goes out beside the
      // key's count (one round trip, as REST's GET), and its text is kept only once the key is counted.
      // Any other key is authenticated before its body is read, so an unknown or malformed one costs no
      // buffered body. What the reading refuses is answered after authentication, as before.
      const readAhead = credentials.kind === 'key' && req.method === 'POST' && countsKnownKeyAtOnce(credentials.secret);
      const sent = readAhead ? await settle(readJsonBody(req, config.maxBodyBytes)) : undefined;
      const parsed = sent?.ok ? readAheadOfRequest(sent.value) : undefined;
      let admission = await authenticate(credentials, config, parsed?.read);
      // Only a session that works makes the request the dashboard's in the log (a refused one is not).
      if (credentials.kind === 'session') markDashboardRequest(res);
      applyAdmission(res, admission);
      const { params: sentParams, query } = await readQueryText(req, admission, credentials, config, sent);
      const params = { ...sentParams, query };
      // Without credentials, nothing is parsed before the address is counted, nor kept after (countKeylessText).
      const keyless = credentials.kind === 'none' ? await countKeylessText(query, client, config) : undefined;
      if (keyless) {
        admission = { ...admission, count: keyless.count };
        applyAdmission(res, admission);
      }
      // A text the limits refused before is refused again here, not parsed, validated and walked again.
      countedIfRefused(undefined, () => throwKnownRefusalFor(query, params.operationName, admission));
      const document = await readDocument(req, params, keyless ? undefined : parsed, credentials.kind === 'none');
      const count = await admitDocument(admission, document, params, client, config, keyless?.precounted);
      if (count) applyAdmission(res, { caller: admission.caller, count });
      // The limits here, before Apollo validates the document: a refusal costs their bounded walk, not
      // graphql-js's validate (Apollo's hook in server.ts then leaves this request alone).
      const operation = getOperationAST(document, params.operationName);
      const type = operation?.operation;
      countedIfRefused(type, () => checkAdmittedOperation(schema, document, params, admission));
      if (type === 'subscription') {
        // Apollo does not run subscriptions: streamed here (GraphQL over SSE, or Apollo's multipart), with
        // a context made for a long-lived operation (loaders without a cache across its messages).
        const context = contextOf(admission, requestId, { config, runtime, clientTokenStreams }, client.ip, 'ws');
        const { operationName, variables } = params;
        const session = credentials.kind === 'session' ? credentials.value : undefined;
        return await streamSubscription(req, res, { schema, document, operationName, variables, context, caller: admission.caller, session, ip: client.ip, requestId, config, subscriptions });
      }
      const context = contextOf(admission, requestId, { config, runtime, clientTokenStreams }, client.ip, 'http', operation);
      markLimitsChecked(context);
      if (admission.caller.kind === 'key') primeReadAhead(context);
      const server = await apollo();
      // The operation is resolved: Apollo runs it as a JSON POST, whichever way it came. Of the request's
      // headers it reads only these two (nothing else reads Apollo's copy): copying all of them cost every request.
      const headers = new HeaderMap([['content-type', 'application/json']]);
      if (req.headers.accept !== undefined) headers.set('accept', req.headers.accept);
      const body: Record<string, unknown> = { query: params.query };
      if (params.operationName !== undefined) body.operationName = params.operationName;
      if (params.variables !== undefined) body.variables = params.variables;
      startDeadline(context, config.graphqlDeadlineMs);
      const result = await withinDeadline(
        server.executeHTTPGraphQLRequest({
          httpGraphQLRequest: { method: 'POST', headers, search: '', body },
          context: async () => context,
        }),
        config.graphqlDeadlineMs,
      );
      // One error instead of an answer that ran out of time or is too large (executionLimits.ts).
      const refuse = (error: ApiError) => {
        res.locals.errorCode = error.code;
        sendJsonError(res, error, requestId);
      };
      if (result === null || deadlinePassed(context)) return refuse(deadlineError(config.graphqlDeadlineMs));
      const bytes = result.body.kind === 'complete' ? Buffer.byteLength(result.body.string) : 0;
      if (bytes > config.graphqlMaxResponseBytes) return refuse(responseTooLarge(bytes, config.graphqlMaxResponseBytes));
      if (context.errorCodes.length > 0) res.locals.errorCode = context.errorCodes[0];
      for (const [name, value] of result.headers) res.setHeader(name, value);
      res.status(result.status ?? 200);
      if (result.body.kind === 'complete') {
        // Written as it is: res.send would hash every answer for an ETag no GraphQL client sends back.
        res.setHeader('Content-Length', bytes);
        keepResponseBody(res, result.body.string);
        res.end(result.body.string);
      } else {
        for await (const chunk of result.body.asyncIterator) res.write(chunk);
        res.end();
      }
    } catch (err) {
      let apiError: ApiError;
      const unavailable = unavailableError(err);
      if (unavailable) {
        apiError = unavailable;
      } else if (isApiError(err)) {
        // A refusal before a key counted the request (401, maintenance): counted per client IP, as on
        // REST, so that it carries X-RateLimit-* too.
        apiError = await countUnidentified(err, req, res, config.publicRateLimitPerMinute);
      } else {
        logger.error({ err, requestId }, 'graphql: unhandled error before execution');
        apiError = new ApiError('internal_error', 'An internal error occurred.');
      }
      res.locals.errorCode = apiError.code;
      if (res.headersSent) {
        res.end();
        return;
      }
      for (const [name, value] of Object.entries(apiError.headers)) res.setHeader(name, value);
      sendJsonError(res, apiError, requestId);
    }
  };
}

/**
 * The operation limits' refusal, counted as a failed operation of its type (`pgw_graphql_operations_total`)
 * as Apollo counted it when the limits ran inside it; other refusals before Apollo (401, 429) are not.
 */
function countedIfRefused(type: string | undefined, check: () => void): void {
  try {
    check();
  } catch (err) {
    graphqlOperation(type ?? 'unknown').error.inc();
    throw err;
  }
}

/**
 * A refusal's GraphQL-shaped body, serialized here so that the log keeps the very text sent. Its type is
 * the one the client prefers of the two GraphQL over HTTP defines: clients that ask for
 * `application/graphql-response+json` first (Apollo Client 4, urql) read a 4xx answer's errors as GraphQL
 * errors only under that type; any other client gets `application/json`, as before.
 */
function sendJsonError(res: Response, error: ApiError, requestId: string): void {
  const text = JSON.stringify(errorResponseBody(error, requestId));
  keepResponseBody(res, text);
  res.status(error.status).type(res.req.accepts(...ERROR_TYPES) === GRAPHQL_RESPONSE_TYPE ? GRAPHQL_RESPONSE_TYPE : 'application/json').send(text);
}

const GRAPHQL_RESPONSE_TYPE = 'application/graphql-response+json';
const ERROR_TYPES: readonly string[] = ['application/json', GRAPHQL_RESPONSE_TYPE];

/**
 * What an HTTP request presents: `Authorization: Bearer` with a client token or a key; without that
 * header, a dashboard session's cookie; else nothing. A cookie request is refused here, before anything
 * runs, unless CSRF-safe (400 `invalid_request`) and, when an `Origin` is sent, same-origin (403
 * `permission_denied`); admission then finds the session's key and counts it in the session's window.
 */
function httpCredentials(req: Request, config: Config): Credentials {
  const authorization = req.headers.authorization;
  if (authorization !== undefined) {
    const token = clientTokenOfHeader(authorization);
    return token === undefined ? { kind: 'key', secret: bearerSecret(authorization) } : { kind: 'clientToken', token };
  }
  const session = sessionCookieOf(req.headers);
  if (session === undefined) return { kind: 'none' };
  requireCsrfSafe(req.headers);
  requireSameOriginIfSent(req.headers, config);
  return { kind: 'session', value: session };
}

/**
 * The request's parameters and the query text it runs (its own, or its persisted query's). Without
 * credentials, what cannot be read is the 401 of a keyless request.
 */
async function readQueryText(
  req: Request,
  admission: Admission,
  credentials: Credentials,
  config: Config,
  body: Settled<unknown> | undefined,
): Promise<{ params: GraphQLRequestParams; query: string }> {
  return keylessAs401(credentials.kind === 'none', async () => {
    const read = async () => {
      // Without credentials only a public call can run, and none needs more than KEYLESS_MAX_BODY_BYTES.
      if (!body) return readJsonBody(req, credentials.kind === 'none' ? KEYLESS_MAX_BODY_BYTES : config.maxBodyBytes);
      if (!body.ok) throw body.error;
      return body.value;
    };
    const params = req.method === 'GET' ? requestParamsOfSearch(req.query as Record<string, unknown>) : requestParams(await read());
    return { params, query: await resolveTrustedText(params, admission, credentials.kind) };
  });
}

/**
 * The document a counted request runs: parsed (or the one parsed ahead), kept for the next request
 * only when the caller has credentials. A GET runs queries only (a mutation sent as a link would change
 * state: CSRF).
 */
async function readDocument(req: Request, params: GraphQLRequestParams & { query: string }, parsed: ParsedAhead | undefined, keyless: boolean): Promise<DocumentNode> {
  return keylessAs401(keyless, async () => {
    const document = keyless ? parseQuery(params.query, false, KEYLESS_MAX_TOKENS) : documentOfCounted(params.query, parsed);
    if (req.method === 'GET' && getOperationAST(document, params.operationName)?.operation === 'mutation') {
      throw ApiError.invalid('Mutations are sent with POST /graphql, never GET');
    }
    return document;
  });
}

/**
 * Without credentials, a request that cannot be read is the 401 of a keyless request; but a hash sent
 * alone is PersistedQueryNotFound, on which APQ clients send their text (keyless callers store none).
 */
async function keylessAs401<T>(keyless: boolean, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (keyless && isApiError(err) && !isPersistedQueryNotFound(err)) throw authenticationFailed();
    throw err;
  }
}

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

/**
 * The execution's result, or null when the deadline comes first: the answer then does not wait for a
 * read already under way (the resolvers after it stop by themselves; what it returns is dropped).
 */
async function withinDeadline<T>(execution: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
  });
  execution.catch(() => undefined); // a failure after the deadline has nobody to answer
  try {
    return await Promise.race([execution, expiry]);
  } finally {
    clearTimeout(timer);
  }
}
