import type { Response } from 'express';
import { keepAliveWheel, type KeptAlive } from '../../realtime/keepAlive';
import type { SubscriptionFraming } from './framing';

/**
 * One GraphQL subscription streamed over an HTTP response, in a transport's framing, and the registry
 * of open ones so that a gateway shutdown ends them (`closeAllHttpSubscriptions`, from the GraphQL
 * service's beforeClose). Like the REST event streams (realtime/sse.ts): a client that stops reading is
 * dropped once MAX_BUFFERED_BYTES wait for it, rather than buffered without bound; one that goes away
 * ('close') ends the stream, and whatever waits on it (onClose) runs once.
 */
const MAX_BUFFERED_BYTES = 1024 * 1024;

export class HttpSubscriptionStream implements KeptAlive {
  private closed = false;
  private readonly closeHandlers: Array<() => void> = [];

  constructor(
    private readonly res: Response,
    readonly framing: SubscriptionFraming,
    heartbeatMs: number,
  ) {
    res.status(200);
    res.setHeader('Content-Type', framing.contentType);
    res.setHeader('Cache-Control', 'no-cache');
    // Tells nginx-style proxies not to buffer the stream.
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    res.socket?.setNoDelay(true);
    res.socket?.setTimeout(0);
    res.on('close', () => this.markClosed());
    open.add(this);
    this.onClose(wheelOf(heartbeatMs).add(this));
    if (framing.opening) this.write(framing.opening);
    // The client may have gone while the operation was being prepared: 'close' will not come again.
    if (res.destroyed || res.socket?.destroyed) this.markClosed();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  write(chunk: string): void {
    if (this.closed) return;
    this.res.write(chunk);
    if (this.res.writableLength > MAX_BUFFERED_BYTES) {
      this.res.destroy();
      this.markClosed();
    }
  }

  /** The keep-alive wheel's call: the framing's heartbeat. */
  comment(): void {
    this.write(this.framing.heartbeat);
  }

  /** Writes `last` (the framing's end) and ends the response; nothing after. */
  end(last: string): void {
    if (this.closed) return;
    this.res.end(last);
    this.markClosed();
  }

  /** Runs when the stream ends, whoever ended it (client, server, shutdown); at once if it has. */
  onClose(fn: () => void): void {
    if (this.closed) fn();
    else this.closeHandlers.push(fn);
  }

  private markClosed(): void {
    if (this.closed) return;
    this.closed = true;
    open.delete(this);
    for (const fn of this.closeHandlers.splice(0)) {
      try {
        fn();
      } catch {
        // A close handler must not stop the others.
      }
    }
  }
}

const open = new Set<HttpSubscriptionStream>();
// One wheel per period (the SSE period is configured, multipart's is Apollo's 5 s): one timer each.
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
