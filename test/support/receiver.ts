import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A real webhook receiver on loopback: records every request's raw bytes and headers. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  at: number;
}

export interface ReceiverReply {
  status: number;
  /** Answer after this long (to test the 5 s timeout). */
  delayMs?: number;
  /** Never answer (the connection stays open until the receiver closes). */
  hang?: boolean;
  headers?: Record<string, string>;
}

export interface Receiver {
  url: string;
  port: number;
  received: ReceivedRequest[];
  /** Decides each answer; default 200. */
  reply: (req: ReceivedRequest) => ReceiverReply;
  /** Resolves with the matching requests once there are at least `count` of them. */
  waitFor(match: (r: ReceivedRequest) => boolean, count?: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<Receiver> {
  const received: ReceivedRequest[] = [];
  const hanging = new Set<http.ServerResponse>();
  const receiver: Receiver = {
    url: '',
    port: 0,
    received,
    reply: () => ({ status: 200 }),
    async waitFor(match, count = 1, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hits = received.filter(match);
        if (hits.length >= count) return hits;
        if (Date.now() > deadline) {
          throw new Error(`receiver: ${hits.length}/${count} matching requests after ${timeoutMs} ms (got ${received.length} in all: ${received.map((r) => r.headers['service-event-id']).join(', ')})`);
        }
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        rawBody: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      received.push(r);
      const reply = receiver.reply(r);
      if (reply.hang) {
        hanging.add(res);
        return;
      }
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(reply.status, { 'content-type': 'text/plain', ...(reply.headers ?? {}) });
        res.end('ok');
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}`;
  return receiver;
}
