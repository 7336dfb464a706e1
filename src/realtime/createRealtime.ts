import type { ConnectionLimits } from '../config';
import { createConnectionSlots, type ConnectionSlots } from './connections';
import { createSseStreams, type SseStreams } from './sse';
import { createClientTokenStreams, type ClientTokenStreams } from './clientTokenStreams';

/**
 * What one gateway's realtime layer holds of its own, built by src/server.ts and handed to the protocols
 * that open long-lived connections (REST's event streams, GraphQL's sockets and HTTP subscriptions):
 * their places under its caps, and its open event streams and its client tokens' streams, which its shutdown alone ends. Two gateways
 * in one process then count and close only their own (docs/architecture.md, "State").
 */
export interface Realtime {
  /** Its places for long-lived connections: caps, lifetimes, revoked keys' connections closed. */
  connections: ConnectionSlots;
  /** Its REST event streams (server-sent events), kept alive at its SSE_KEEPALIVE_MS. */
  sse: SseStreams;
  /** Its streams and subscriptions opened with a client token, ended when the token stops working. */
  clientTokens: ClientTokenStreams;
}

/** `limits`: the gateway's caps on long-lived connections (its Config's `connections`). */
export function createRealtime(opts: { limits: ConnectionLimits }): Realtime {
  const connections = createConnectionSlots(opts.limits);
  return {
    connections,
    sse: createSseStreams(connections, opts.limits.sseKeepAliveMs),
    clientTokens: createClientTokenStreams(opts.limits.revocationCheckMs),
  };
}
