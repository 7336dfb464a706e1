import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhookSignature } from '../../src/webhooks/verifySignature';

/**
 * The local webhook receiver, in its own process so that the bench's own work never delays a receipt.
 * It verifies every delivery as an integrator would (Service-Signature, raw body), answers 200 at
 * once, de-duplicates by Service-Event-Id, and keeps, per event, the event's `created_at` and the
 * wall-clock time (sub-millisecond) the request's body was complete.
 */
export type ReceiverCommand = { type: 'secret'; secret: string } | { type: 'report' } | { type: 'reset' } | { type: 'close' };
export interface Receipt {
  createdAtMs: number;
  receivedAtMs: number;
}
export type ReceiverMessage =
  | { type: 'ready'; port: number }
  | { type: 'report'; receipts: Receipt[]; duplicates: number; rejected: number; firstRejection?: string };

let secret: string | null = null;
const receipts = new Map<string, Receipt>();
let duplicates = 0;
let rejected = 0;
let firstRejection: string | undefined;

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const receivedAtMs = performance.timeOrigin + performance.now();
    const raw = Buffer.concat(chunks);
    try {
      if (!secret) throw new Error('no secret yet');
      const event = verifyWebhookSignature<Record<string, unknown>>(raw, req.headers['service-signature'] as string | undefined, secret);
      if (receipts.has(event.id)) duplicates++;
      else receipts.set(event.id, { createdAtMs: Date.parse(event.created_at), receivedAtMs });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    } catch (err) {
      rejected++;
      firstRejection ??= (err as Error).message;
      res.writeHead(400).end();
    }
  });
});
server.keepAliveTimeout = 65_000;

server.listen(0, '127.0.0.1', () => {
  process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port } satisfies ReceiverMessage);
});

process.on('message', (msg: ReceiverCommand) => {
  if (msg.type === 'secret') secret = msg.secret;
  else if (msg.type === 'report') {
    process.send?.({ type: 'report', receipts: [...receipts.values()], duplicates, rejected, firstRejection } satisfies ReceiverMessage);
  } else if (msg.type === 'reset') {
    receipts.clear();
    duplicates = 0;
    rejected = 0;
    firstRejection = undefined;
  } else if (msg.type === 'close') {
    server.close();
    server.closeAllConnections();
    process.exit(0);
  }
});
process.on('disconnect', () => process.exit(0));
