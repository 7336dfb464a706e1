import type { Response } from 'express';
import { keepAliveWheel, type KeptAlive } from '../../realtime/keepAlive';
import { ResponseStream, track } from '../../realtime/responseStream';
import type { SubscriptionFraming } from './framing';

/**
 * One GraphQL subscription streamed over an HTTP response, in a transport's framing, and the registry
 * of open ones so that a gateway shutdown ends them (`closeAllHttpSubscriptions`, from the GraphQL
 * service's beforeClose). A ResponseStream, as the REST event streams are (realtime/sse.ts): a client
 * that stops reading is dropped rather than buffered without bound; one that goes away ends the stream,
 * and whatever waits on it (onClose) runs once.
 */
export class HttpSubscriptionStream extends ResponseStream implements KeptAlive {
  constructor(
    res: Response,
    readonly framing: SubscriptionFraming,
    heartbeatMs: number,
  ) {
    super(res, { 'Content-Type': framing.contentType });
    track(open, this);
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

// eslint-disable-next-line no-restricted-syntax -- per process until createRealtime/createGraphql (issue 59): one gateway's close ends every gateway's HTTP subscriptions
const open = new Set<HttpSubscriptionStream>();
// One wheel per period (the SSE period is configured, multipart's is Apollo's 5 s): one timer each.
// eslint-disable-next-line no-restricted-syntax -- one keep-alive timer per period for every stream of the process
const wheels = new Map<number, ReturnType<typeof keepAliveWheel>>();
const wheelOf = (periodMs: number) => {
  let wheel = wheels.get(periodMs);
  if (!wheel) wheels.set(periodMs, (wheel = keepAliveWheel(periodMs)));
  return wheel;
};

export function openHttpSubscriptionCount(): number {
  return open.size;
}

/**
 * Ends every open stream (gateway shutdown) the way its client retries: a graphql-sse stream without
 * `complete` (its client reconnects), a multipart one with a transport error saying so.
 */
export function closeAllHttpSubscriptions(): void {
  for (const stream of [...open]) {
    stream.end(stream.framing.interrupted({ message: 'server restarting; subscribe again', extensions: { code: 'service_unavailable' } }));
  }
}
