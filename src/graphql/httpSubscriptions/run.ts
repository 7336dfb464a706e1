import type { Request, Response } from 'express';
import type { Config } from '../../config';
import { sessionSocketKey } from '../../domain/sessions/sessionService';
import { trackSessionSocket } from '../../domain/sessions/sessionSockets';
import { ApiError, isApiError } from '../../errors';
import { leaveWriteGate } from '../../http/writeGate';
import { logger } from '../../logger';
import { GRAPHQL_PATH } from '../../http/paths';
import { graphqlOperation } from '../../metrics/domain';
import type { Caller } from '../../operations/caller';
import type { CloseReason } from '../../realtime/connections';
import type { GraphQLContext } from '../context';
import { validateDocument } from '../documentCache';
import { apiGraphQLError, formatErrors } from '../errors';
import { responseTooLarge } from '../executionLimits';
import { GraphQLError, subscribe, type DocumentNode, type ExecutionResult, type GraphQLSchema } from '../graphqljs';
import type { SentResult, SubscriptionFraming } from './framing';
import { acceptsMultipartSubscription, multipartFraming } from './multipartFraming';
import { sseFraming } from './sseFraming';
import { HttpSubscriptionStream, type HttpSubscriptions } from './stream';

/** The 400 of a subscription sent over HTTP without a streaming Accept: what to send instead. */
export const STREAMING_ACCEPT_NEEDED =
  'A subscription over HTTP is streamed: send Accept: text/event-stream (GraphQL over SSE, distinct connections) ' +
  `or Accept: multipart/mixed;subscriptionSpec=1.0 (Apollo multipart subscriptions), or subscribe over the WebSocket at ${GRAPHQL_PATH} (graphql-transport-ws).`;

/** The transport an Accept header asks for; SSE first, as graphql-sse's own handler reads it. */
export function framingOf(accept: string | undefined): SubscriptionFraming | null {
  if (!accept) return null;
  if (/(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(accept)) return sseFraming;
  if (acceptsMultipartSubscription(accept)) return multipartFraming;
  return null;
}

export interface AdmittedSubscription {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName?: string;
  variables?: Record<string, unknown>;
  /** A context made for a long-lived operation (no loader cache across messages). */
  context: GraphQLContext;
  caller: Caller;
  /** The dashboard session's cookie value, when a session authenticated it: sign-out ends the stream. */
  session?: string;
  ip: string;
  requestId: string;
  config: Config;
  /** The gateway's open streams and connection places (createGraphql's). */
  subscriptions: HttpSubscriptions;
}

/**
 * Runs a subscription that http.ts has admitted and streams it in the framing Accept asks for, within
 * graphql-ws's caps (src/realtime/connections.ts), its places given back however it ends. Not
 * graphql-sse's `createHandler`: it would run its own admission and queue without bound.
 * More: docs/decisions/notes/graphql.md, "Subscriptions over HTTP".
 */
export async function streamSubscription(req: Request, res: Response, op: AdmittedSubscription): Promise<void> {
  const framing = req.method === 'HEAD' ? null : framingOf(req.headers.accept);
  if (!framing) throw ApiError.invalid(STREAMING_ACCEPT_NEEDED);
  const keyId = op.caller.kind === 'key' ? op.caller.actor.apiKeyId : null;
  const { slots } = op.subscriptions;
  const lease = slots.takeSlot('sse', op.ip, keyId);
  let source: AsyncIterableIterator<ExecutionResult> | ExecutionResult;
  try {
    slots.addSubscription(lease, 'http');
    const errors = validateDocument(op.schema, op.document);
    source = errors.length > 0 ? { errors } : await subscribe({ schema: op.schema, document: op.document, operationName: op.operationName, variableValues: op.variables, contextValue: op.context });
  } catch (err) {
    // Refused by a subscription cap (or subscribe itself failed): counted so, as graphql-ws counts its refusals.
    graphqlOperation('subscription').error.inc();
    slots.release(lease);
    throw err;
  }
  // Counted once, when admitted, as over graphql-ws.
  graphqlOperation('subscription').ok.inc();
  // The write gate's place (POST) is for starting work, not for the stream's whole life.
  leaveWriteGate(res);
  const stream = new HttpSubscriptionStream(res, framing, framing.heartbeatMs(op.config.connections.sseKeepAliveMs), op.subscriptions);
  stream.onClose(() => slots.release(lease));
  slots.attach(lease, (reason) => endFor(stream, reason, op.requestId));
  // Signing out ends the session's streams at once, as it closes its WebSockets (ws.ts).
  if (op.session !== undefined) stream.onClose(trackSessionSocket(sessionSocketKey(op.session), () => endFor(stream, 'signedOut', op.requestId)));
  if (!(Symbol.asyncIterator in source)) {
    stream.write(framing.next(sentJson(source, op)));
    stream.end(framing.complete());
    return;
  }
  // Not awaited: the request handler's frames (the body read, the admission's objects) are let go while
  // the stream lives on; what it needs is in `op`. pump catches what the source throws.
  pump(stream, source, op).catch((err: unknown) => {
    logger.error({ err, requestId: op.requestId }, 'graphql: HTTP subscription stream failed');
    stream.end('');
  });
}

/** Results as they come, each checked and framed, until the source or the client ends. */
async function pump(stream: HttpSubscriptionStream, source: AsyncIterableIterator<ExecutionResult>, op: AdmittedSubscription): Promise<void> {
  stream.onClose(() => void source.return?.());
  const framing = stream.framing;
  try {
    for (;;) {
      const { value, done } = await source.next();
      if (stream.isClosed) return;
      if (done) break;
      stream.write(framing.next(sentJson(value, op)));
    }
    stream.end(framing.complete());
  } catch (err) {
    // The source failed (a client token revoked or expired, the database away, a fault): its error,
    // formatted as every GraphQL error is (internal ones logged and hidden), then the end.
    stream.end(framing.failed(formatErrors([asGraphQLError(err)], op.requestId)));
  }
}

/** A result's text, its errors formatted; over the response size cap, that refusal instead (as ws.ts onNext). */
function sentJson(result: ExecutionResult, op: AdmittedSubscription): string {
  const sent: SentResult = result.errors?.length ? { ...result, errors: formatErrors(result.errors, op.requestId) } : result;
  const json = JSON.stringify(sent);
  const max = op.config.graphqlMaxResponseBytes;
  const bytes = Buffer.byteLength(json);
  if (bytes <= max) return json;
  return JSON.stringify({ errors: formatErrors([apiGraphQLError(responseTooLarge(bytes, max))], op.requestId) });
}

function asGraphQLError(err: unknown): GraphQLError {
  if (err instanceof GraphQLError) return err;
  if (isApiError(err)) return apiGraphQLError(err);
  return new GraphQLError(err instanceof Error ? err.message : String(err), { originalError: err instanceof Error ? err : undefined });
}

/** Why the server ends a stream: connections.ts's reasons, or the dashboard session's sign-out. */
type EndReason = CloseReason | 'signedOut';
const FINAL_MESSAGE: Partial<Record<EndReason, string>> = { revoked: 'api key revoked', signedOut: 'dashboard session ended' };

/** The server ends a stream: a revoked key or an ended session is final; a lifetime reached is retried. */
function endFor(stream: HttpSubscriptionStream, reason: EndReason, requestId: string): void {
  const framing = stream.framing;
  const final = FINAL_MESSAGE[reason];
  if (final !== undefined) {
    stream.end(framing.failed(formatErrors([apiGraphQLError(new ApiError('authentication_failed', final))], requestId)));
  } else {
    stream.end(framing.interrupted({ message: 'stream lifetime reached; subscribe again', extensions: { code: 'service_unavailable', request_id: requestId } }));
  }
}
