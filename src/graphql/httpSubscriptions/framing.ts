import type { GraphQLFormattedError } from '../graphqljs';

/** An execution result as it is sent: its errors already formatted (code, request id). */
export interface SentResult {
  data?: unknown;
  errors?: readonly GraphQLFormattedError[];
  extensions?: Record<string, unknown>;
}

/**
 * How one HTTP subscription transport frames a stream (sseFraming.ts, multipartFraming.ts): the stream
 * itself (stream.ts) and its life (run.ts) are shared; only these bytes differ.
 */
export interface SubscriptionFraming {
  /** For logs and the bench: `graphql_sse` or `multipart`. */
  readonly name: 'graphql_sse' | 'multipart';
  readonly contentType: string;
  /** Written with the headers (SSE: a comment some browsers need before they report the open). */
  readonly opening: string;
  /** Sent when the keep-alive wheel comes round. */
  readonly heartbeat: string;
  /** Its period (multipart: Apollo's 5 s; SSE: the REST streams' SSE_KEEPALIVE_MS). */
  heartbeatMs(sseKeepAliveMs: number): number;
  /** One result of the operation, given as its JSON text (serialized once, for the size check too). */
  next(json: string): string;
  /** The clean end: the operation completed. */
  complete(): string;
  /**
   * The end by an error after the stream began (the source failed, the key or token stopped working):
   * the client is told and must not subscribe again as it is.
   */
  failed(errors: readonly GraphQLFormattedError[]): string;
  /** The end for a reason the client may retry at once (lifetime reached, gateway restart). */
  interrupted(error: GraphQLFormattedError): string;
}
