import type { Response } from 'express';

/**
 * A response that stays open and is written to as things happen: the REST event streams (sse.ts) and
 * GraphQL subscriptions over HTTP (src/graphql/httpSubscriptions) are both one. What they share lives
 * here: the headers that keep proxies from buffering, the socket made to send at once and never time
 * out, a client that stops reading dropped once MAX_BUFFERED_BYTES wait for it (rather than buffered
 * without bound), and whatever waits on the end (onClose) run once, whoever ended it.
 */
const MAX_BUFFERED_BYTES = 1024 * 1024;

export class ResponseStream {
  private closed = false;
  private readonly closeHandlers: Array<() => void> = [];

  constructor(
    protected readonly res: Response,
    headers: Readonly<Record<string, string>>,
  ) {
    res.status(200);
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    res.setHeader('Cache-Control', 'no-cache');
    // Tells nginx-style proxies not to buffer the stream.
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    res.socket?.setNoDelay(true);
    res.socket?.setTimeout(0);
    // The response's 'close' means the connection went away (or the response ended). The request's
    // own 'close' is not used: it fires once its body has been read, which says nothing here.
    res.on('close', () => this.markClosed());
    // The client may have gone while the stream was being prepared: 'close' will not fire again.
    if (res.destroyed || res.socket?.destroyed) this.markClosed();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Writes `chunk`; a client that has let MAX_BUFFERED_BYTES pile up is dropped instead. */
  write(chunk: string): void {
    if (this.closed) return;
    this.res.write(chunk);
    if (this.res.writableLength > MAX_BUFFERED_BYTES) {
      this.res.destroy();
      this.markClosed();
    }
  }

  /** Runs when the stream ends, whoever ended it (client, server, shutdown); at once if it has. */
  onClose(fn: () => void): void {
    if (this.closed) fn();
    else this.closeHandlers.push(fn);
  }

  /** Ends the response, after `last` when given; nothing is written after. */
  protected finish(last?: string): void {
    if (this.closed) return;
    this.res.end(last);
    this.markClosed();
  }

  private markClosed(): void {
    if (this.closed) return;
    this.closed = true;
    for (const fn of this.closeHandlers.splice(0)) {
      try {
        fn();
      } catch {
        // A close handler must not stop the others.
      }
    }
  }
}

/** A registry of open streams (for shutdown and gauges): a stream is in it until it ends. */
export function track<T extends ResponseStream>(open: Set<T>, stream: T): void {
  open.add(stream);
  stream.onClose(() => open.delete(stream));
}
