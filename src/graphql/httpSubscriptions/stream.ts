import type { Response } from 'express';
import { keepAliveWheel, type KeptAlive } from '../../realtime/keepAlive';
import { ResponseStream, track } from '../../realtime/responseStream';
import type { ConnectionSlots } from '../../realtime/connections';
import type { SubscriptionFraming } from './framing';

/**
 * One GraphQL subscription streamed over an HTTP response, in a transport's framing, and a gateway's
 * open ones (HttpSubscriptions, made by createGraphql) so that its shutdown ends them, and only them. A
 * ResponseStream, as the REST event streams are (realtime/sse.ts): a client that stops reading is
 * dropped rather than buffered without bound; one that goes away ends the stream, and whatever waits on
 * it (onClose) runs once.
 */
export class HttpSubscriptionStream extends ResponseStream implements KeptAlive {
  constructor(
    res: Response,
    readonly framing: SubscriptionFraming,
    heartbeatMs: number,
    subscriptions: HttpSubscriptions,
  ) {
    super(res, { 'Content-Type': framing.contentType });
    subscriptions.track(this);
    this.onClose(wheelOf(heartbeatMs).add(this));
    if (framing.opening) this.write(framing.opening);
  }

  /** The keep-alive wheel's call: the framing's heartbeat. */
  comment(): void {
    this.write(this.framing.heartbeat);
  }

  /** Writes `last` (the framing's end) and ends the response; nothing after. */
  end(last: string): void {
    this.finish(last);
  }
}

// One wheel per period (the SSE period is configured, multipart's is Apollo's 5 s): one timer each.
// eslint-disable-next-line no-restricted-syntax -- one keep-alive timer per period for every stream of the process
const wheels = new Map<number, ReturnType<typeof keepAliveWheel>>();
const wheelOf = (periodMs: number) => {
  let wheel = wheels.get(periodMs);
  if (!wheel) wheels.set(periodMs, (wheel = keepAliveWheel(periodMs)));
  return wheel;
};

/** One gateway's open HTTP subscription streams, and the connection places they take. */
export interface HttpSubscriptions {
  /** The gateway's connection places (its realtime's): a stream counts as one of the IP's and key's streams. */
  readonly slots: ConnectionSlots;
  /** Counts `stream` open until it ends (HttpSubscriptionStream's constructor). */
  track(stream: HttpSubscriptionStream): void;
  /** Open streams (for tests and diagnostics). */
  count(): number;
  /**
   * Ends every open stream (gateway shutdown) the way its client retries: a graphql-sse stream without
   * `complete` (its client reconnects), a multipart one with a transport error saying so.
   */
  closeAll(): void;
}

export function createHttpSubscriptions(slots: ConnectionSlots): HttpSubscriptions {
  const open = new Set<HttpSubscriptionStream>();
  return {
    slots,
    track: (stream) => track(open, stream),
    count: () => open.size,
    closeAll() {
      for (const stream of [...open]) {
        stream.end(stream.framing.interrupted({ message: 'server restarting; subscribe again', extensions: { code: 'service_unavailable' } }));
      }
    },
  };
}
