import { HeaderMap, type ApolloServer } from '@apollo/server';
import type { RequestHandler } from 'express';
import type { Config } from '../config';
import { authenticateSessionRequest } from '../dashboard/session/session.graphql';
import { sessionCookieOf } from '../dashboard/session/session.http';
import { ApiError, isApiError } from '../errors';
import { logger } from '../logger';
import { readJsonBody } from '../operations/http/body';
import { bearerSecret } from '../operations/bearer';
import { acceptKey, authenticateKeyRequest } from '../operations/http/authenticate';
import { clientIp, countUnidentified } from '../operations/http/rateLimit';
import { clientTokenHttpContext, clientTokenOfHeader } from './clientTokenAuth';
import { createContext, createKeylessContext, type GraphQLContext } from './context';
import { errorResponseBody, maintenanceError } from './errors';
import { deadlineError, deadlinePassed, responseTooLarge, startDeadline } from './executionLimits';
import { countPublicCalls, keylessPublicCalls } from './publicOperations';

/**
 * `POST /graphql`. Before GraphQL runs, the same steps as a REST call: authenticate the bearer key,
 * count the request against the key's rate limit (one GraphQL request = one request, X-RateLimit-*
 * headers set), read the JSON body with the REST body reader (size limit, invalid_json). A refusal at
 * this stage answers with the REST status (401, 429 + Retry-After, 413, 400) and a GraphQL-shaped body
 * `{errors: [{message, extensions: {code, request_id}}]}`. Then Apollo executes it.
 *
 * A request without an `Authorization` header is read first: if its operation calls public fields only
 * (`createSandboxAccount`), it runs without a key, like the public REST route it mirrors, each call
 * counted in that route's per-IP bucket (X-RateLimit-* of that bucket, 429 over it); anything else is
 * the 401 it always was. Public calls in a request with a key are counted in server.ts, per operation.
 *
 * Without an `Authorization` header, a dashboard session cookie (`pgw_session`) authenticates the
 * request as its key, once the request is CSRF-safe and same-origin (src/dashboard/session).
 */
export function graphqlHttpHandler(config: Config, apollo: () => Promise<ApolloServer<GraphQLContext>>): RequestHandler {
  return async (req, res) => {
    const requestId = String(res.locals.requestId ?? '');
    try {
      if (config.maintenanceMode) throw maintenanceError();
      const ip = clientIp(req);
      let body: unknown;
      let context: GraphQLContext;
      // A dashboard session's cookie stands for a key when no Authorization header is sent.
      const session = req.headers.authorization === undefined ? sessionCookieOf(req.headers) : undefined;
      // Unreadable, or not public: the 401 of authenticateAndCount below, as for any keyless request.
      const keyless =
        req.headers.authorization === undefined && session === undefined ? await readJsonBody(req, config.maxBodyBytes).catch(() => undefined) : undefined;
      const calls = keyless === undefined ? null : keylessPublicCalls(keyless);
      const clientToken = clientTokenOfHeader(req.headers.authorization);
      if (calls) {
        const counted = await countPublicCalls(calls, ip, config);
        for (const [name, value] of Object.entries(counted?.headers ?? {})) res.setHeader(name, value);
        if (counted?.refusal) throw counted.refusal;
        body = keyless;
        context = createKeylessContext(requestId, config, ip);
      } else if (clientToken) {
        body = await readJsonBody(req, config.maxBodyBytes);
        context = await clientTokenHttpContext(clientToken, body, res, requestId, config, ip);
      } else {
        // One round trip, as on REST: find the key and count the request (a session's: its key's, after
        // the session's CSRF and origin checks).
        const caller =
          session === undefined
            ? await authenticateKeyRequest(bearerSecret(req.headers.authorization), res, config)
            : acceptKey(await authenticateSessionRequest(session, req.headers, config), res, config);
        body = await readJsonBody(req, config.maxBodyBytes);
        context = createContext(caller, requestId, config, ip);
      }
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw ApiError.invalid("The request body must be a JSON object: {\"query\": \"...\", \"variables\": {...}}");
      }
      const server = await apollo();
      const headers = new HeaderMap();
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
      }
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
        res.status(error.status).json(errorResponseBody(error, requestId));
      };
      if (result === null || deadlinePassed(context)) return refuse(deadlineError(config.graphqlDeadlineMs));
      const bytes = result.body.kind === 'complete' ? Buffer.byteLength(result.body.string) : 0;
      if (bytes > config.graphqlMaxResponseBytes) return refuse(responseTooLarge(bytes, config.graphqlMaxResponseBytes));
      if (context.errorCodes.length > 0) res.locals.errorCode = context.errorCodes[0];
      for (const [name, value] of result.headers) res.setHeader(name, value);
      res.status(result.status ?? 200);
      if (result.body.kind === 'complete') {
        res.send(result.body.string);
      } else {
        for await (const chunk of result.body.asyncIterator) res.write(chunk);
        res.end();
      }
    } catch (err) {
      let apiError: ApiError;
      if (isApiError(err)) {
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
      res.status(apiError.status).json(errorResponseBody(apiError, requestId));
    }
  };
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
