import { print } from 'graphql-sse';
import type { SubscriptionFraming } from './framing';

/**
 * GraphQL over SSE, distinct connections mode (node_modules/graphql-sse/PROTOCOL.md): `next` events whose
 * data is the ExecutionResult, then `complete` with an empty `data:` field (EventSource fires no
 * listener without it). Serialized by graphql-sse's own `print` (a `next` by hand, with the result's
 * text already made: the same bytes, test/graphql/httpSubscriptionFraming.test.ts).
 * An error after the start is a `next` with errors, then `complete` (the protocol has no error event;
 * the graphql-sse client hands the errors to `next` and does not retry). An interruption ends the
 * response without `complete`: the graphql-sse client takes that for a network fault and subscribes again.
 */
export const sseFraming: SubscriptionFraming = {
  name: 'graphql_sse',
  contentType: 'text/event-stream; charset=utf-8',
  opening: ':\n\n',
  heartbeat: ': keep-alive\n\n',
  heartbeatMs: (sseKeepAliveMs) => sseKeepAliveMs,
  // What `print` writes for a `next` event, with the text the size check already made.
  next: (json) => `event: next\ndata: ${json}\n\n`,
  complete: () => print({ event: 'complete', data: null }),
  failed: (errors) => print({ event: 'next', data: { errors } as never }) + print({ event: 'complete', data: null }),
  interrupted: (error) => `: ${error.message}\n\n`,
};
