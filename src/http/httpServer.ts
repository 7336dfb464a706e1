import http from 'node:http';
import type { Socket } from 'node:net';
import type { Config } from '../config';
import { newId } from '../ids';
import { rateLimitedIn } from '../metrics/domain';
import { logger } from '../logger';
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
 *   shares it, so raise the cap there (or set it to 0, no cap) and cap at the proxy.
 */
export function createHttpServer(config: Config): http.Server {
  const { headersTimeoutMs, requestTimeoutMs, maxConnectionsPerIp } = config.http;
  const server = http.createServer({ connectionsCheckingInterval: 1_000, headersTimeout: headersTimeoutMs, requestTimeout: requestTimeoutMs });
  server.keepAliveTimeout = 65_000;
  if (maxConnectionsPerIp > 0) capConnectionsPerAddress(server, maxConnectionsPerIp);
  return server;
}

/** The 429 in the specification's envelope, written on the socket as it comes (no request was read). */
function overCapAnswer(): string {
  rateLimitedIn('connections').inc();
  const requestId = newId('req');
  const body = JSON.stringify({
    error: { code: 'rate_limit_exceeded', message: 'Too many open connections from this address; close some and retry.', request_id: requestId },
  });
  return (
    'HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json; charset=utf-8\r\nRetry-After: 1\r\n' +
    `Request-Id: ${requestId}\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

function capConnectionsPerAddress(server: http.Server, max: number): void {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const count = (open.get(address) ?? 0) + 1;
    if (count > max) {
      logger.warn({ address, max }, 'connection refused: too many open connections from one address');
      // Answered without reading the request: a client that sent one reads the 429, and the socket goes.
      answerAndClose(socket, overCapAnswer());
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
