import type { Duplex } from 'node:stream';

/**
 * Answers written by hand on a socket, outside Node's HTTP response machinery: a refused WebSocket
 * upgrade (src/graphql/ws.ts), a connection over the per-address cap (./httpServer.ts).
 *
 * Why a listener: Node removes its own 'error' listener from a socket before it emits 'upgrade', so an
 * upgrade socket has none. A client that resets the connection (RST) while or after it is answered then
 * raises ECONNRESET (or EPIPE on the write) with nobody listening, and an unhandled 'error' event ends
 * the process. A client's fault is the client's: the socket is destroyed, nothing else happens.
 */
export function guardSocket(socket: Duplex): void {
  if (socket.listeners('error').includes(destroyOnError)) return;
  socket.on('error', destroyOnError);
}

function destroyOnError(this: Duplex): void {
  this.destroy();
}

/**
 * How long a hand-written answer may take to leave before its socket is destroyed anyway: the answers
 * are a few hundred bytes, which the kernel takes at once unless the client stopped reading with a full
 * window; such a client gets nothing more.
 */
const ANSWER_FLUSH_MS = 5_000;

/**
 * Writes `answer` and closes the socket: the write side ends with it, and the socket is destroyed once
 * the answer is flushed (or after ANSWER_FLUSH_MS). HTTP sockets are half-open capable, so `end()`
 * alone would leave the socket open for as long as the client keeps its own side open.
 */
export function answerAndClose(socket: Duplex, answer: string): void {
  guardSocket(socket);
  if (socket.destroyed) return;
  const timer = setTimeout(() => socket.destroy(), ANSWER_FLUSH_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.end(answer, () => socket.destroy());
}
