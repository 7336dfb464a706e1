import http from 'node:http';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { pool, sleep } from '../lib/stats';
import { SUBSCRIBER_KINDS, type ParentMessage, type SubscriberKind, type WorkerMessage, type WorkerTarget } from './protocol';

/**
 * A fan-out client process: holds live subscribers of each kind (protocol.ts) on its share of the
 * payments, cancels those payments on command, and times, per subscriber, the gap between "just before
 * the cancel request was sent" and "the event arrived on this subscriber's socket". Nothing is
 * subtracted: the figure includes the cancel request's own handling, the event store, the change
 * stream, the bus, the write to the socket, and this process's own event-loop delay.
 */
const SUBSCRIPTION = `subscription Watch($id: ID!) {
  paymentIntentUpdated(id: $id) { snapshot eventType eventId paymentIntent { id status updatedAt } }
}`;

interface Subscriber {
  paymentId: string;
  /** performance.now() when the payment.cancelled event arrived. */
  receivedAt: number | null;
  /** Wall-clock ms from the intent's `updated_at` (the state change) to that arrival. */
  sinceChange: number | null;
}

const wallNow = () => performance.timeOrigin + performance.now();

let target: WorkerTarget | null = null;
const subscribers: Record<SubscriberKind, Subscriber[]> = { sse: [], ws: [], graphqlSse: [], multipart: [] };
const httpRequests: http.ClientRequest[] = [];
const wsClients: Client[] = [];
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
let onReceive: (() => void) | null = null;

function send(msg: WorkerMessage): void {
  process.send?.(msg);
}

/** What a subscriber heard in one message: its snapshot, or its payment's cancellation (with `updated_at`). */
type Heard = { snapshot: true } | { cancelledAt: string } | null;

/**
 * One long-lived HTTP response, cut into messages by `split` (which returns the whole messages and
 * keeps the rest), each read by `hear`; resolves at the snapshot.
 */
function openHttpStream(
  kind: SubscriberKind,
  paymentId: string,
  request: { method: 'GET' | 'POST'; path: string; headers: Record<string, string>; body?: string },
  split: (buf: string) => [string[], string],
  hear: (message: string) => Heard,
): Promise<void> {
  const t = target!;
  const sub: Subscriber = { paymentId, receivedAt: null, sinceChange: null };
  return new Promise((resolve, reject) => {
    const req = http.request(`${t.gatewayUrl}${request.path}`, { method: request.method, agent, headers: { authorization: `Bearer ${t.sk}`, ...request.headers } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`${kind} ${paymentId}: status ${res.statusCode}`));
        return;
      }
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (chunk: string) => {
        const now = performance.now();
        let messages: string[];
        [messages, buf] = split(buf + chunk);
        for (const message of messages) {
          const heard = hear(message);
          if (heard && 'snapshot' in heard) {
            subscribers[kind].push(sub);
            resolve();
          } else if (heard && sub.receivedAt === null) {
            sub.receivedAt = now;
            sub.sinceChange = wallNow() - Date.parse(heard.cancelledAt);
            onReceive?.();
          }
        }
      });
      res.on('error', () => undefined);
    });
    req.on('error', reject);
    req.end(request.body);
    httpRequests.push(req);
  });
}

/** SSE events: the blocks before each blank line, and what follows the last. */
const sseEvents = (buf: string): [string[], string] => {
  const blocks = buf.split('\n\n');
  return [blocks.slice(0, -1), blocks.at(-1)!];
};
const sseField = (block: string, name: string) =>
  block
    .split('\n')
    .filter((l) => l.startsWith(`${name}: `))
    .map((l) => l.slice(name.length + 2))
    .join('\n');

/** Multipart parts: each one whole once the delimiter after it has come. */
const multipartParts = (buf: string): [string[], string] => {
  const parts = buf.split('\r\n--graphql');
  return [parts.slice(0, -1).map((p) => p.slice(p.indexOf('\r\n\r\n') + 4)), parts.at(-1)!];
};

type Update = { paymentIntentUpdated?: { snapshot: boolean; eventType: string | null; paymentIntent: { updatedAt: string } } };
const heardUpdate = (data: Update | undefined): Heard => {
  const update = data?.paymentIntentUpdated;
  if (update?.snapshot) return { snapshot: true };
  return update?.eventType === 'PAYMENT_CANCELLED' ? { cancelledAt: update.paymentIntent.updatedAt } : null;
};
const graphqlBody = (paymentId: string) => JSON.stringify({ query: SUBSCRIPTION, variables: { id: paymentId } });

const openers: Record<SubscriberKind, (paymentId: string) => Promise<void>> = {
  sse: (paymentId) =>
    openHttpStream('sse', paymentId, { method: 'GET', path: `/v1/payment_intents/${paymentId}/events`, headers: { accept: 'text/event-stream' } }, sseEvents, (block) => {
      const event = sseField(block, 'event');
      if (event === 'snapshot') return { snapshot: true };
      return event === 'payment.cancelled' ? { cancelledAt: (JSON.parse(sseField(block, 'data')) as { updated_at: string }).updated_at } : null;
    }),
  ws: (paymentId) => openWs(target!, paymentId),
  graphqlSse: (paymentId) =>
    openHttpStream(
      'graphqlSse',
      paymentId,
      { method: 'POST', path: '/graphql', headers: { accept: 'text/event-stream', 'content-type': 'application/json' }, body: graphqlBody(paymentId) },
      sseEvents,
      (block) => (sseField(block, 'event') === 'next' ? heardUpdate((JSON.parse(sseField(block, 'data')) as { data?: Update }).data) : null),
    ),
  multipart: (paymentId) =>
    openHttpStream(
      'multipart',
      paymentId,
      { method: 'POST', path: '/graphql', headers: { accept: 'multipart/mixed;subscriptionSpec=1.0', 'content-type': 'application/json' }, body: graphqlBody(paymentId) },
      multipartParts,
      (part) => (part.startsWith('{"payload"') ? heardUpdate((JSON.parse(part) as { payload: { data?: Update } | null }).payload?.data) : null),
    ),
};

function openWs(t: WorkerTarget, paymentId: string): Promise<void> {
  const sub: Subscriber = { paymentId, receivedAt: null, sinceChange: null };
  const client = createClient({
    url: `${t.gatewayUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${t.sk}` },
    retryAttempts: 0,
    lazy: true,
  });
  wsClients.push(client);
  return new Promise((resolve, reject) => {
    client.subscribe<{ paymentIntentUpdated: { snapshot: boolean; eventType: string | null; paymentIntent: { updatedAt: string } } }>(
      { query: SUBSCRIPTION, variables: { id: paymentId } },
      {
        next(msg) {
          const now = performance.now();
          if (msg.errors?.length) {
            reject(new Error(`graphql-ws ${paymentId}: ${JSON.stringify(msg.errors[0])}`));
            return;
          }
          const update = msg.data?.paymentIntentUpdated;
          if (!update) return;
          if (update.snapshot) {
            subscribers.ws.push(sub);
            resolve();
          } else if (update.eventType === 'PAYMENT_CANCELLED' && sub.receivedAt === null) {
            sub.receivedAt = now;
            sub.sinceChange = wallNow() - Date.parse(update.paymentIntent.updatedAt);
            onReceive?.();
          }
        },
        error(err) {
          reject(err instanceof Error ? err : new Error(`graphql-ws ${paymentId}: ${JSON.stringify(err)}`));
        },
        complete() {},
      },
    );
  });
}

async function connect(kind: SubscriberKind, perPayment: number, parallel: number): Promise<void> {
  const t = target!;
  const jobs = t.payments.flatMap((p) => Array.from({ length: perPayment }, () => p));
  let failed = 0;
  let firstError: string | undefined;
  await pool(jobs, parallel, async (paymentId) => {
    try {
      await openers[kind](paymentId);
    } catch (err) {
      failed++;
      firstError ??= (err as Error).message ?? String(err);
    }
  });
  send({ type: 'connected', kind, open: subscribers[kind].length, failed, firstError });
}

async function trigger(offsetMs: number, intervalMs: number, timeoutMs: number): Promise<void> {
  const t = target!;
  const sentAt = new Map<string, number>();
  const triggerMs: number[] = [];
  let triggerErrors = 0;
  const all = SUBSCRIBER_KINDS.flatMap((kind) => subscribers[kind]);
  const expected = all.length;
  let received = 0;
  const allReceived = new Promise<void>((resolve) => {
    onReceive = () => {
      if (++received >= expected) resolve();
    };
    if (expected === 0) resolve();
  });
  const start = performance.now() + offsetMs;
  const requests = t.payments.map(async (paymentId, i) => {
    const due = start + i * intervalMs;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const t0 = performance.now();
    sentAt.set(paymentId, t0);
    try {
      const res = await fetch(`${t.gatewayUrl}/v1/payment_intents/${paymentId}/cancel`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.sk}` },
      });
      await res.arrayBuffer();
      if (res.status !== 200) triggerErrors++;
    } catch {
      triggerErrors++;
    }
    triggerMs.push(performance.now() - t0);
  });
  await Promise.all(requests);
  await Promise.race([allReceived, sleep(timeoutMs)]);
  onReceive = null;
  const latencies = (subs: Subscriber[]) =>
    subs.filter((s) => s.receivedAt !== null && sentAt.has(s.paymentId)).map((s) => s.receivedAt! - sentAt.get(s.paymentId)!);
  const byKind = Object.fromEntries(SUBSCRIBER_KINDS.map((kind) => [kind, latencies(subscribers[kind])])) as Record<SubscriberKind, number[]>;
  send({
    type: 'result',
    latencies: byKind,
    missed: Object.fromEntries(SUBSCRIBER_KINDS.map((kind) => [kind, subscribers[kind].length - byKind[kind].length])) as Record<SubscriberKind, number>,
    sinceChange: all.filter((s) => s.sinceChange !== null).map((s) => s.sinceChange!),
    trigger: triggerMs,
    triggerErrors,
  });
}

async function close(): Promise<void> {
  for (const c of wsClients) await c.dispose();
  for (const r of httpRequests) r.destroy();
  agent.destroy();
  process.exit(0);
}

process.on('message', (msg: ParentMessage) => {
  const task = (async () => {
    switch (msg.type) {
      case 'init':
        target = { gatewayUrl: msg.gatewayUrl, sk: msg.sk, payments: msg.payments };
        send({ type: 'ready' });
        return;
      case 'connect':
        return connect(msg.kind, msg.perPayment, msg.parallel);
      case 'trigger':
        return trigger(msg.offsetMs, msg.intervalMs, msg.timeoutMs);
      case 'close':
        return close();
    }
  })();
  task.catch((err: unknown) => send({ type: 'error', message: (err as Error).stack ?? String(err) }));
});
process.on('disconnect', () => process.exit(0));
