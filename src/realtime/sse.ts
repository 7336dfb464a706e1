import type { Response } from 'express';
import type { CloseReason, ConnectionSlots } from './connections';
import { ResponseStream, track } from './responseStream';
import { keepAliveWheel } from './keepAlive';

/**
 * A server-sent-events connection over an Express response, and a gateway's open ones (SseStreams,
 * made by createRealtime) so that its shutdown ends them cleanly, and only them.
 */
export interface SseMessage {
  id?: string;
  event?: string;
  data: string;
}

export class SseConnection extends ResponseStream {
  constructor(res: Response) {
    super(res, { 'Content-Type': 'text/event-stream', Connection: 'keep-alive' });
  }

  send(message: SseMessage): void {
    let chunk = '';
    if (message.id) chunk += `id: ${message.id}\n`;
    if (message.event) chunk += `event: ${message.event}\n`;
    // JSON has no raw newlines, but split anyway so any payload stays one SSE field per line.
    for (const line of message.data.split('\n')) chunk += `data: ${line}\n`;
    // A client that stopped reading is dropped (ResponseStream); it can reconnect with Last-Event-ID
    // and lose nothing.
    this.write(`${chunk}\n`);
  }

  comment(text: string): void {
    this.write(`: ${text}\n\n`);
  }

  /** Ends the stream after a comment saying why (the stream's convention: no error frame). */
  endWith(why: string): void {
    this.comment(why);
    this.end();
  }

  /** Ends the stream because the server stops: a `retry:` field and a comment, then the end. */
  endForRestart(): void {
    this.finish(`retry: ${RESTART_RETRY_MS}\n: server restarting; reconnect with Last-Event-ID\n\n`);
  }

  end(): void {
    this.finish();
  }
}

const CLOSE_COMMENT: Record<CloseReason, string> = {
  revoked: 'api key revoked',
  lifetime: 'stream lifetime reached; reconnect with Last-Event-ID',
};

/** One gateway's event streams: opened within its caps, ended by its shutdown. */
export interface SseStreams {
  /**
   * Opens a stream within the caps (src/realtime/connections.ts): a place for the client IP (and the
   * key, on authenticated streams) is taken first, so a client over a cap gets 429
   * `rate_limit_exceeded` in the JSON error envelope before anything is prepared; `prepare` may still
   * fail with a normal JSON answer (404...), which frees the place.
   */
  open(res: Response, owner: { ip: string; keyId: string | null }, prepare: () => Promise<{ attach(conn: SseConnection): void }>): Promise<void>;
  /** Open streams (for tests and diagnostics). */
  count(): number;
  /**
   * Ends every open stream (gateway shutdown) with a reconnect hint: a `retry:` field and a comment
   * saying why, then a clean end. EventSource reconnects after that delay with `Last-Event-ID` and
   * misses nothing (the stream replays from it); other clients read the comment.
   */
  closeAll(): void;
}

/**
 * The reconnection delay given to clients when the gateway stops (the SSE `retry:` field, which
 * EventSource keeps for its next reconnections): another instance, or this one restarted, is usually
 * there within a second or two, and a browser's own default is about 3 s.
 */
export const RESTART_RETRY_MS = 1_000;

/**
 * `slots`: the gateway's connection places, which its streams take and give back; `keepAliveMs`: its
 * SSE_KEEPALIVE_MS, the period of every stream's `: keep-alive` comment (one wheel for all, keepAlive.ts).
 */
export function createSseStreams(slots: ConnectionSlots, keepAliveMs: number): SseStreams {
  const open = new Set<SseConnection>();
  const keepAlive = keepAliveWheel(keepAliveMs);
  return {
    async open(res, owner, prepare) {
      const lease = slots.takeSlot('sse', owner.ip, owner.keyId);
      try {
        const stream = await prepare();
        const conn = new SseConnection(res);
        track(open, conn);
        // A comment says why before the clean end; EventSource reconnects with Last-Event-ID (and gets
        // 401 when the key was revoked). Attached first, so that a client already gone releases the
        // place and its lifetime timer together.
        slots.attach(lease, (reason) => conn.endWith(CLOSE_COMMENT[reason]));
        conn.onClose(() => slots.release(lease));
        conn.onClose(keepAlive.add(conn));
        stream.attach(conn);
      } catch (err) {
        slots.release(lease);
        throw err;
      }
    },
    count: () => open.size,
    closeAll() {
      for (const c of [...open]) c.endForRestart();
    },
  };
}
