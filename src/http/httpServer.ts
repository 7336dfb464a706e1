import http from 'node:http';
import type { Socket } from 'node:net';
import type { Config } from '../config';
import { newId } from '../ids';
import { rateLimitedIn } from '../metrics/domain';
import { connectionRefusedAtCap } from '../metrics/http';
import { logger } from '../logger';
import { countedWarning } from '../platform/countedWarning';
import { answerAndClose } from './rawAnswer';

/**
 * The gateway's HTTP server, with the limits that keep slow or greedy clients from holding its sockets
 * (contract decisions, "When the database or the disk fails"; docs/operations.md, "Slow and greedy clients"):
 * - request headers must arrive within `headersTimeoutMs` (15 s) and the whole request, body included,
 *   within `requestTimeoutMs` (30 s); Node answers 408 and closes the socket otherwise. Once a request
 *   is in, its answer may last (SSE streams, WebSocket upgrades are exempt by construction);
 * - the deadlines are checked every second, not Node's default 30 s, so a trickling socket is closed
 *   close to its deadline;
 * - a keep-alive socket idle for 65 s is closed (longer than the 60 s idle timeout of common load
 *   balancers, so that they, not we, close first);
 * - at most `maxConnectionsPerIp` open sockets per client address: more are answered 429 and closed
 *   at once, before any request is read. The address is the socket's peer: behind a proxy every client
 *   shares it, so raise the cap there (or set it to 0, no cap) and cap at the proxy;
 * - at most `maxConnections` open sockets in all (every socket holds a file descriptor and some 15 KB
 *   of heap, and everything kept per socket or per address grows with them): more are answered 503
 *   and closed at once, the same way.
 */
export function createHttpServer(config: Config): http.Server {
  const { headersTimeoutMs, requestTimeoutMs, maxConnections, maxConnectionsPerIp } = config.http;
  const server = http.createServer({ connectionsCheckingInterval: 1_000, headersTimeout: headersTimeoutMs, requestTimeout: requestTimeoutMs });
  server.keepAliveTimeout = 65_000;
  // The total first: a socket it refused is not counted against its address.
  if (maxConnections > 0) capConnections(server, maxConnections);
  if (maxConnectionsPerIp > 0) capConnectionsPerAddress(server, maxConnectionsPerIp);
  return server;
}

/** An error in the specification's envelope, written on the socket as it comes (no request was read). */
function overCapAnswer(statusLine: string, code: string, message: string): string {
  const requestId = newId('req');
  const body = JSON.stringify({ error: { code, message, request_id: requestId } });
  return (
    `HTTP/1.1 ${statusLine}\r\nContent-Type: application/json; charset=utf-8\r\nRetry-After: 1\r\n` +
    `Request-Id: ${requestId}\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

const warnServerFull = countedWarning('connections refused: HTTP_MAX_CONNECTIONS sockets open');

/**
 * Counted here rather than left to Node's `server.maxConnections`, which (Node 20 and 24) closes a
 * connection over it before a socket exists, without a word: the client sees its connection reset
 * and cannot tell a full server from a dead one. Node's cap is still set, at twice ours, as a backstop
 * for the refused sockets themselves: each is open only while its answer leaves (it fits in a fresh
 * socket's buffer, so at once), but a flood of them then finds Node closing the excess unanswered.
 */
function capConnections(server: http.Server, max: number): void {
  server.maxConnections = max * 2;
  let open = 0;
  server.on('connection', (socket: Socket) => {
    if (open >= max) {
      connectionRefusedAtCap.inc();
      warnServerFull(1, { max });
      answerAndClose(socket, overCapAnswer('503 Service Unavailable', 'service_unavailable', 'The server holds as many connections as it accepts; retry in a moment.'));
      return;
    }
    open++;
    socket.once('close', () => open--);
  });
}

function capConnectionsPerAddress(server: http.Server, max: number): void {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    if (socket.writableEnded) return; // refused by the total cap
    const address = socket.remoteAddress ?? '';
    const count = (open.get(address) ?? 0) + 1;
    if (count > max) {
      logger.warn({ address, max }, 'connection refused: too many open connections from one address');
      // Answered without reading the request: a client that sent one reads the 429, and the socket goes.
      rateLimitedIn('connections').inc();
      answerAndClose(socket, overCapAnswer('429 Too Many Requests', 'rate_limit_exceeded', 'Too many open connections from this address; close some and retry.'));
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
  });
}
