import type { Request, Response } from 'express';
import { admit, attach, release, type CloseReason, type Lease } from './connections';

/**
 * A server-sent-events connection over an Express response, and the registry of open ones so that a
 * gateway shutdown can end them cleanly (`closeAllSseConnections`, called from `beforeClose`).
 */
export interface SseMessage {
  id?: string;
  event?: string;
  data: string;
}

const MAX_BUFFERED_BYTES = 1024 * 1024;

export class SseConnection {
  private closed = false;
  private readonly closeHandlers: Array<() => void> = [];

  constructor(
    private readonly req: Request,
    private readonly res: Response,
    lease?: Lease,
  ) {
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream');
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('Connection', 'keep-alive');
    // Tells nginx-style proxies not to buffer the stream.
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    req.socket.setNoDelay(true);
    req.socket.setTimeout(0);
    const onGone = () => this.markClosed();
    // The response's 'close' means the connection went away (or the response ended). The request's
    // own 'close' is not used: it fires once its body has been read, which says nothing here.
    res.on('close', onGone);
    open.add(this);
    if (lease) {
      this.onClose(() => release(lease));
      // A comment says why before the clean end; EventSource reconnects with Last-Event-ID (and gets
      // 401 when the key was revoked).
      attach(lease, (reason) => this.endWith(CLOSE_COMMENT[reason]));
    }
    // The client may have gone while the stream was being prepared: 'close' will not fire again.
    if (res.destroyed || req.socket.destroyed) this.markClosed();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  send(message: SseMessage): void {
    if (this.closed) return;
    let chunk = '';
    if (message.id) chunk += `id: ${message.id}\n`;
    if (message.event) chunk += `event: ${message.event}\n`;
    // JSON has no raw newlines, but split anyway so any payload stays one SSE field per line.
    for (const line of message.data.split('\n')) chunk += `data: ${line}\n`;
    this.res.write(`${chunk}\n`);
    // A client that stopped reading would make the server buffer without bound: drop it; it can
    // reconnect with Last-Event-ID and lose nothing.
    if (this.res.writableLength > MAX_BUFFERED_BYTES) this.abort();
  }

  private abort(): void {
    this.res.destroy();
    this.markClosed();
  }

  comment(text: string): void {
    if (!this.closed) this.res.write(`: ${text}\n\n`);
  }

  /** Runs when the stream ends, whoever ended it (client, server, shutdown). */
  onClose(fn: () => void): void {
    if (this.closed) fn();
    else this.closeHandlers.push(fn);
  }

  /** Ends the stream after a comment saying why (the stream's convention: no error frame). */
  endWith(why: string): void {
    this.comment(why);
    this.end();
  }

  /** Ends the stream because the server stops: a `retry:` field and a comment, then the end. */
  endForRestart(): void {
    if (!this.closed) this.res.write(`retry: ${RESTART_RETRY_MS}\n: server restarting; reconnect with Last-Event-ID\n\n`);
    this.end();
  }

  end(): void {
    if (this.closed) return;
    this.res.end();
    this.markClosed();
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

const CLOSE_COMMENT: Record<CloseReason, string> = {
  revoked: 'api key revoked',
  lifetime: 'stream lifetime reached; reconnect with Last-Event-ID',
};

/**
 * Opens a stream within the caps (src/realtime/connections.ts): a place for the client IP (and the key,
 * on authenticated streams) is taken first, so a client over a cap gets 429 `rate_limit_exceeded` in
 * the JSON error envelope before anything is prepared; `prepare` may still fail with a normal JSON
 * answer (404...), which frees the place.
 */
export async function openSseStream(
  req: Request,
  res: Response,
  owner: { ip: string; keyId: string | null },
  prepare: () => Promise<{ attach(conn: SseConnection): void }>,
): Promise<void> {
  const lease = admit('sse', owner.ip, owner.keyId);
  try {
    const stream = await prepare();
    stream.attach(new SseConnection(req, res, lease));
  } catch (err) {
    release(lease);
    throw err;
  }
}

const open = new Set<SseConnection>();

export function openSseConnectionCount(): number {
  return open.size;
}

/**
 * The reconnection delay given to clients when the gateway stops (the SSE `retry:` field, which
 * EventSource keeps for its next reconnections): another instance, or this one restarted, is usually
 * there within a second or two, and a browser's own default is about 3 s.
 */
export const RESTART_RETRY_MS = 1_000;

/**
 * Ends every open stream (gateway shutdown) with a reconnect hint: a `retry:` field and a comment saying
 * why, then a clean end. EventSource reconnects after that delay with `Last-Event-ID` and misses
 * nothing (the stream replays from it); other clients read the comment.
 */
export function closeAllSseConnections(): void {
  for (const c of [...open]) c.endForRestart();
}
