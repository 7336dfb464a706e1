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
 * (docs/operations.md, "Slow and greedy clients"): header and request deadlines checked every second, idle
 * keep-alive sockets closed after 65 s, and caps on open sockets per client address and in all, answered and
 * closed before anything is read. More: docs/decisions/notes/edge.md, "The HTTP server's limits".
 */
export function createHttpServer(config: Config): GatewayHttpServer {
  const { headersTimeoutMs, requestTimeoutMs, maxConnections, maxConnectionsPerIp } = config.http;
  // Classes of this server's own, so that its app's prototypes can be put under them (usePrototypes).
  class Request extends http.IncomingMessage {}
  class Response<R extends http.IncomingMessage = http.IncomingMessage> extends http.ServerResponse<R> {}
  const server = http.createServer({
    connectionsCheckingInterval: 1_000,
    headersTimeout: headersTimeoutMs,
    requestTimeout: requestTimeoutMs,
    IncomingMessage: Request,
    ServerResponse: Response,
  }) as GatewayHttpServer;
  server.keepAliveTimeout = 65_000;
  // The total first: a socket it refused is not counted against its address.
  if (maxConnections > 0) capConnections(server, maxConnections);
  if (maxConnectionsPerIp > 0) capConnectionsPerAddress(server, maxConnectionsPerIp);
  server.usePrototypes = (request, response) => {
    Object.setPrototypeOf(Request.prototype, request);
    Object.setPrototypeOf(Response.prototype, response);
  };
  return server;
}

export interface GatewayHttpServer extends http.Server {
  /**
   * Makes every request and response of this server inherit from `request` and `response` (which must
   * inherit from IncomingMessage's and ServerResponse's): the Express app's, so that the API's requests
   * need not have their prototype changed one by one, which costs V8 a map change each time
   * (src/rest/apiEntry.ts).
   */
  usePrototypes(request: object, response: object): void;
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
