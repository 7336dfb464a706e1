import http from 'node:http';
import type { Duplex } from 'node:stream';
import { getOperationAST, type GraphQLSchema } from './graphqljs';
import { validateDocument } from './documentCache';
import { CloseCode, type Context } from 'graphql-ws';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import type { Config } from '../config';
import { authenticate } from '../domain/accounts/apiKeyService';
import { ApiError, isApiError } from '../errors';
import { isSameOriginUpgrade, sessionCookieOf } from '../http/sessionCookie';
import { sessionKey, sessionSocketKey } from '../domain/sessions/sessionService';
import { trackSessionSocket } from '../domain/sessions/sessionSockets';
import { newId } from '../ids';
import { logger } from '../logger';
import type { CloseReason, ConnectionSlots, Lease } from '../realtime/connections';
import { bearerSecret } from '../operations/bearer';
import { unavailableError } from '../db/unavailable';
import { GRAPHQL_PATH } from '../http/paths';
import { answerAndClose, guardSocket } from '../http/rawAnswer';
import { authenticate as admitCaller, type Credentials } from '../operations/admit';
import { refuseIfOver } from '../operations/rateLimitPolicy';
import { graphqlOperation } from '../metrics/domain';
import { contextOf } from './callerContext';
import { admitDocument } from './documentRules';
import { parseQuery } from './parseQuery';
import { requestParams } from './requestParams';
import { resolveTrustedText } from './trustedDocuments';
import { connectionClientToken } from './clientTokenScope';
import { apiGraphQLError, formatErrors } from './errors';
import { maintenanceError } from '../http/maintenance';
import { deadlineError, deadlinePassed, oversize, responseTooLarge, startDeadline } from './executionLimits';
import { checkAdmittedOperation } from './limits';
import { throwKnownRefusalFor } from './refusedDocuments';
import type { GatewayRuntime } from '../domain/gatewayRuntime';
import type { ClientTokenStreams } from '../realtime/clientTokenStreams';

export { GRAPHQL_PATH };

type ConnectionParams = { authorization?: unknown; Authorization?: unknown; clientToken?: unknown } | undefined;
type WsState = {
  /**
   * The key or client token given at connection, or the dashboard session of the upgrade's cookie,
   * authenticated and counted again for each operation (a revoked key or token, or an ended session,
   * stops working).
   */
  credentials?: Credentials;
  requestIds?: Map<string, string>;
};
type WsContext = Context<ConnectionParams, Extra & WsState>;

/**
 * GraphQL over WebSocket (`graphql-transport-ws`) on the gateway's HTTP server, path /graphql: the same
 * admission, limits and errors as over HTTP, per operation; caps per IP, key and socket; close codes a
 * graphql-ws client acts on rightly (4401 not retried, 1013 retried). More: docs/decisions/notes/graphql.md,
 * "GraphQL over WebSocket".
 */
/** WebSocket close code 1013 (RFC 6455 registry): the server is overloaded or unavailable; retry later. */
const TRY_AGAIN_LATER = 1013;

const CLOSE: Record<CloseReason, [number, string]> = {
  revoked: [CloseCode.Unauthorized, 'api key revoked'],
  lifetime: [1000, 'connection lifetime reached; reconnect'],
};
/** WebSocket close code 1012 (RFC 6455 registry): the server restarts; graphql-ws clients retry it. */
const SERVICE_RESTART = 1012;

/** `slots`: the gateway's connection places (its realtime's), which its sockets take and give back. */
export function startGraphqlWs(
  httpServer: http.Server,
  schema: GraphQLSchema,
  config: Config,
  runtime: GatewayRuntime,
  slots: ConnectionSlots,
  clientTokenStreams: ClientTokenStreams,
): { dispose(): Promise<void> } {
  const wss = new WebSocketServer({ noServer: true, maxPayload: config.maxBodyBytes });
  const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    // Node took its own 'error' listener off before 'upgrade': a client reset would end the process.
    guardSocket(socket);
    const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (pathname === GRAPHQL_PATH) {
      // A dashboard session's cookie is honoured only from the gateway's own origin (CSRF).
      if (sessionCookieOf(req.headers) !== undefined && !isSameOriginUpgrade(req.headers, config)) {
        refuseUpgrade(socket, new ApiError('permission_denied', 'A dashboard session connects only from the gateway origin (Origin header).'));
        return;
      }
      let lease: Lease;
      try {
        lease = slots.takeSlot('ws', req.socket.remoteAddress ?? 'unknown');
      } catch (err) {
        if (!isApiError(err)) throw err;
        refuseUpgrade(socket, err);
        return;
      }
      // The TCP socket's end frees the place, whether or not the handshake completed.
      socket.once('close', () => slots.release(lease));
      wss.handleUpgrade(req, socket, head, (ws) => {
        leases.set(req, lease);
        slots.attach(lease, (reason) => ws.close(...CLOSE[reason]));
        wss.emit('connection', ws, req);
      });
    } else if (httpServer.listenerCount('upgrade') === 1) {
      // Nobody else serves WebSockets: refuse rather than leave the socket hanging.
      answerAndClose(socket, 'HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    }
  };
  httpServer.on('upgrade', onUpgrade);
  const leases = new WeakMap<http.IncomingMessage, Lease>();

  const server = useServer<ConnectionParams, WsState>(
    {
      schema,
      isProd: true,
      onConnect: async (ctx: WsContext) => {
        const params = ctx.connectionParams;
        try {
          const clientToken = await connectionClientToken(params);
          if (clientToken !== undefined) {
            ctx.extra.credentials = { kind: 'clientToken', token: clientToken };
          } else {
            const secret = bearerSecret(params?.authorization ?? params?.Authorization, true);
            // Without a key in connection_init, the upgrade's session cookie (same origin, checked above).
            const session = secret === undefined ? sessionCookieOf(ctx.extra.request.headers) : undefined;
            const key = session === undefined ? (await authenticate(secret)).key : await sessionKey(session);
            const lease = leases.get(ctx.extra.request);
            // Identified by its key, a session's socket closes when the key is revoked, like the key's own.
            if (lease) slots.identify(lease, key._id);
            ctx.extra.credentials = session === undefined ? { kind: 'key', secret } : { kind: 'session', value: session };
            if (session !== undefined) {
              // Signing out closes the session's sockets at once, as revoking a key closes the key's.
              const socket = ctx.extra.socket;
              const forget = trackSessionSocket(sessionSocketKey(session), () => socket.close(CloseCode.Unauthorized, 'dashboard session ended'));
              socket.once('close', forget);
            }
          }
          ctx.extra.requestIds = new Map();
          return true;
        } catch (thrown) {
          const err = isApiError(thrown) ? thrown : unavailableError(thrown);
          if (!err) throw thrown;
          const code =
            err.code === 'rate_limit_exceeded' ? CloseCode.TooManyInitialisationRequests : err.code === 'service_unavailable' ? TRY_AGAIN_LATER : CloseCode.Unauthorized;
          ctx.extra.socket.close(code, `${err.code}: ${err.message}`.slice(0, 120));
          return false;
        }
      },
      onSubscribe: async (ctx: WsContext, id, payload) => {
        const requestId = newId('req');
        ctx.extra.requestIds?.set(id, requestId);
        try {
          if (config.maintenanceMode) throw maintenanceError();
          // The admission of every transport (./documentRules.ts): the caller counted again per operation
          // (a revoked key or token stops working), then the rules of the document that runs.
          const credentials: Credentials = ctx.extra.credentials ?? { kind: 'key', secret: undefined };
          const admission = await admitCaller(credentials, config);
          if (admission.count) refuseIfOver(admission.count);
          const ip = ctx.extra.request.socket.remoteAddress ?? 'unknown';
          const params = requestParams(payload);
          // Authenticated and counted above: the document may be kept for the next operation that sends it.
          const query = await resolveTrustedText(params, admission, credentials.kind);
          throwKnownRefusalFor(query, params.operationName, admission);
          const document = parseQuery(query, true);
          // In HTTP's order (http.ts): the document is admitted (each mutation field counted) before the
          // limits and validation refuse it, so that a refused document costs the key the same on both.
          const count = await admitDocument(admission, document, params, { ip }, config);
          if (count) refuseIfOver(count);
          // The limits before validation: a refusal costs their bounded walk, not graphql-js's validate.
          checkAdmittedOperation(schema, document, params, admission);
          const errors = validateDocument(schema, document);
          if (errors.length > 0) {
            graphqlOperation('unknown').error.inc();
            return errors;
          }
          const lease = leases.get(ctx.extra.request);
          if (lease && getOperationAST(document, params.operationName)?.operation === 'subscription') slots.addSubscription(lease, id);
          const contextValue = contextOf(admission, requestId, { config, runtime, clientTokenStreams }, ip, 'ws');
          // A query or mutation has the HTTP deadline; a subscription lives on, each message small.
          const type = getOperationAST(document, params.operationName)?.operation;
          if (type !== 'subscription') startDeadline(contextValue, config.graphqlDeadlineMs);
          // Over WebSocket an operation counts once, when it is admitted (ok) or refused (error).
          graphqlOperation(type ?? 'unknown').ok.inc();
          return { schema, document, operationName: params.operationName, variableValues: params.variables, contextValue };
        } catch (err) {
          graphqlOperation('unknown').error.inc();
          if (isApiError(err)) return [apiGraphQLError(err)];
          const unavailable = unavailableError(err);
          if (unavailable) return [apiGraphQLError(unavailable)];
          throw err;
        }
      },
      onNext: (ctx: WsContext, id, _payload, args, result) => {
        // Per message, the deadline and the size cap of an HTTP answer (executionLimits.ts).
        const oversized = oversize(result, config.graphqlMaxResponseBytes);
        const refusal = deadlinePassed(args.contextValue as object)
          ? deadlineError(config.graphqlDeadlineMs)
          : oversized === null ? null : responseTooLarge(oversized, config.graphqlMaxResponseBytes);
        if (refusal) return { errors: formatErrors([apiGraphQLError(refusal)], ctx.extra.requestIds?.get(id) ?? newId('req')) };
        if (!result.errors?.length) return;
        return { ...result, errors: formatErrors(result.errors, ctx.extra.requestIds?.get(id) ?? newId('req')) };
      },
      onError: (ctx: WsContext, id, _payload, errors) => {
        // graphql-ws calls no onComplete after an operation refused by onSubscribe: forget its id here, or
        // the socket's map would keep one entry per refused operation for the socket's whole lifetime.
        const requestId = ctx.extra.requestIds?.get(id) ?? newId('req');
        ctx.extra.requestIds?.delete(id);
        return formatErrors(errors, requestId);
      },
      onComplete: (ctx: WsContext, id) => {
        ctx.extra.requestIds?.delete(id);
        const lease = leases.get(ctx.extra.request);
        if (lease) slots.removeSubscription(lease, id);
      },
    },
    wss,
  );
  // A client's protocol fault (a message over maxPayload: 1009; a bad frame: 1002, 1007) is a 'error'
  // that ws has already answered by closing the socket with its code. graphql-ws's listener would print
  // it with a stack as an internal error and try 4500 on top: one line at info instead (registered after
  // useServer's, so that it replaces it).
  wss.on('connection', (socket) => {
    socket.removeAllListeners('error');
    socket.on('error', (err: Error & { code?: string }) => logger.info({ code: err.code, message: err.message }, 'graphql-ws: client protocol error, socket closed'));
  });

  let disposing: Promise<void> | null = null;
  return {
    dispose() {
      disposing ??= (async () => {
        httpServer.off('upgrade', onUpgrade);
        // The gateway stops: each socket is closed with 1012 Service Restart, which graphql-ws clients
        // (and browsers' reconnect logic) treat as retryable, so they reconnect and subscribe again;
        // graphql-ws's own dispose would say 1001 Going Away. Then the server closes.
        for (const client of wss.clients) client.close(SERVICE_RESTART, 'service restart; reconnect');
        await Promise.resolve(server.dispose()).catch((err: unknown) => logger.warn({ err }, 'graphql-ws dispose failed'));
      })();
      return disposing;
    },
  };
}

/** The answer to a refused upgrade: its HTTP status (429 with Retry-After over a cap, 403 cross-origin) and the error envelope. */
function refuseUpgrade(socket: Duplex, err: ApiError): void {
  const body = JSON.stringify({ error: { code: err.code, message: err.message, request_id: newId('req') } });
  const headers = Object.entries(err.headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  answerAndClose(
    socket,
    `HTTP/1.1 ${err.status} ${http.STATUS_CODES[err.status]}\r\nConnection: close\r\nContent-Type: application/json\r\n${headers}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
