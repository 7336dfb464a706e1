import http from 'node:http';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { pool, sleep } from '../lib/stats';
import type { ParentMessage, WorkerMessage, WorkerTarget } from './protocol';

/**
 * A fan-out client process: holds live SSE streams and graphql-ws subscriptions on its share of the
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
const sse: Subscriber[] = [];
const ws: Subscriber[] = [];
const sseRequests: http.ClientRequest[] = [];
const wsClients: Client[] = [];
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
let onReceive: (() => void) | null = null;

function send(msg: WorkerMessage): void {
  process.send?.(msg);
}

function openSse(t: WorkerTarget, paymentId: string): Promise<void> {
  const sub: Subscriber = { paymentId, receivedAt: null, sinceChange: null };
  return new Promise((resolve, reject) => {
    const url = `${t.gatewayUrl}/v1/payment_intents/${paymentId}/events`;
    const req = http.get(url, { agent, headers: { authorization: `Bearer ${t.sk}`, accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`SSE ${paymentId}: status ${res.statusCode}`));
        return;
      }
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (chunk: string) => {
        const now = performance.now();
        buf += chunk;
        for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          if (event === 'snapshot') {
            sse.push(sub);
            resolve();
          } else if (event === 'payment.cancelled' && sub.receivedAt === null) {
            sub.receivedAt = now;
            const data = block
              .split('\n')
              .filter((l) => l.startsWith('data: '))
              .map((l) => l.slice(6))
              .join('\n');
            sub.sinceChange = wallNow() - Date.parse((JSON.parse(data) as { updated_at: string }).updated_at);
            onReceive?.();
          }
        }
      });
      res.on('error', () => undefined);
    });
    req.on('error', reject);
    sseRequests.push(req);
  });
}

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
            ws.push(sub);
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

async function connect(kind: 'sse' | 'ws', perPayment: number, parallel: number): Promise<void> {
  const t = target!;
  const jobs = t.payments.flatMap((p) => Array.from({ length: perPayment }, () => p));
  let failed = 0;
  let firstError: string | undefined;
  await pool(jobs, parallel, async (paymentId) => {
    try {
      await (kind === 'sse' ? openSse(t, paymentId) : openWs(t, paymentId));
    } catch (err) {
      failed++;
      firstError ??= (err as Error).message ?? String(err);
    }
  });
  send({ type: 'connected', kind, open: kind === 'sse' ? sse.length : ws.length, failed, firstError });
}

async function trigger(offsetMs: number, intervalMs: number, timeoutMs: number): Promise<void> {
  const t = target!;
  const sentAt = new Map<string, number>();
  const triggerMs: number[] = [];
  let triggerErrors = 0;
  const expected = sse.length + ws.length;
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
  const sseLat = latencies(sse);
  const wsLat = latencies(ws);
  send({
    type: 'result',
    sse: sseLat,
    ws: wsLat,
    sinceChange: [...sse, ...ws].filter((s) => s.sinceChange !== null).map((s) => s.sinceChange!),
    trigger: triggerMs,
    missedSse: sse.length - sseLat.length,
    missedWs: ws.length - wsLat.length,
    triggerErrors,
  });
}

async function close(): Promise<void> {
  for (const c of wsClients) await c.dispose();
  for (const r of sseRequests) r.destroy();
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
      case 'connectSse':
        return connect('sse', msg.perPayment, msg.parallel);
      case 'connectWs':
        return connect('ws', msg.perPayment, msg.parallel);
      case 'trigger':
        return trigger(msg.offsetMs, msg.intervalMs, msg.timeoutMs);
      case 'close':
        return close();
    }
  })();
  task.catch((err: unknown) => send({ type: 'error', message: (err as Error).stack ?? String(err) }));
});
process.on('disconnect', () => process.exit(0));
