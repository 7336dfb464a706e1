// Subscriptions over HTTP against clients that misbehave, on the real gateway with small caps: over a
// cap (429 in the envelope), a TCP reset mid-stream, streams opened and abandoned, a client that never
// reads. Each test ends with every place given back: the next one can open up to the cap again.
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient as wsCreateClient } from 'graphql-ws';
import WebSocket from 'ws';
import { createAccount, type TestAccount } from '../support/accounts';
import { createPayment, referenceBody } from '../support/payments';
import { sharedGateway, type TestServer } from '../support/server';
import { waitFor } from '../support/wait';
import { mintToken } from '../clientTokens/support';
import { follow, referencePayment, UPDATES, within } from './httpSubscriptionSupport';

const PER_IP = 4;
const PER_KEY = 2;
const SUBSCRIPTIONS_PER_KEY = 3;

let server: TestServer;
let baseUrl: string;
let acct: TestAccount;
let payment: any;

beforeAll(async () => {
  server = await sharedGateway({
    SSE_MAX_STREAMS_PER_IP: String(PER_IP),
    SSE_MAX_STREAMS_PER_KEY: String(PER_KEY),
    WS_MAX_SUBSCRIPTIONS_PER_KEY: String(SUBSCRIPTIONS_PER_KEY),
  });
  baseUrl = server.baseUrl;
  acct = await createAccount(baseUrl);
  payment = await referencePayment(acct);
});
afterAll(async () => {
  await server?.stop();
});
/** This gateway's open subscription streams, and the places its streams hold. */
const openHttpSubscriptionCount = () => server.gateway.graphql.httpSubscriptions.count();
const openConnectionCounts = () => server.gateway.realtime.connections.openCounts();
afterEach(async () => {
  // Whatever a test opened is closed by then: no place is left taken.
  await waitFor(async () => [openHttpSubscriptionCount(), openConnectionCounts().sse], ([streams, places]) => streams === 0 && places === 0);
});

/** A subscription POST written on a raw TCP socket, its answer kept as text. */
function rawStream(bearer: string, query = UPDATES, variables: Record<string, unknown> = { id: payment.id }) {
  const { port } = new URL(baseUrl);
  const socket = net.connect(Number(port), '127.0.0.1');
  socket.on('error', () => undefined);
  const body = JSON.stringify({ query, variables });
  socket.write(
    `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${bearer}\r\nContent-Type: application/json\r\n` +
      `Accept: text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, closed, text: () => text, seen: (what: string) => waitFor(async () => text, (t) => t.includes(what)) };
}

/** POST /graphql for a stream; resolves with the response (a stream to cancel, or a refusal). */
function openStream(bearer: string, signal?: AbortSignal): Promise<Response> {
  return fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query: UPDATES, variables: { id: payment.id } }),
    signal,
  });
}

async function expect429(res: Response, what: string): Promise<void> {
  expect(res.status).toBe(429);
  expect(res.headers.get('retry-after')).toBe('10');
  const body = await res.json();
  expect(body.errors[0].extensions.code).toBe('rate_limit_exceeded');
  expect(body.errors[0].message).toContain(what);
}

describe('HTTP subscription streams under hostile clients', () => {
  it('the per-key stream cap answers 429 in the envelope; closing one frees a place', async () => {
    const abort = new AbortController();
    const open = [await openStream(acct.sk, abort.signal), await openStream(acct.sk, abort.signal)];
    expect(open.map((r) => r.status)).toEqual([200, 200]);
    await expect429(await openStream(acct.sk), 'event streams for this API key');
    abort.abort();
    await waitFor(async () => openHttpSubscriptionCount(), (n) => n === 0);
    const again = new AbortController();
    expect((await openStream(acct.sk, again.signal)).status).toBe(200);
    again.abort();
  });

  it("the per-key subscription cap is graphql-ws's: WebSocket subscriptions count against it", async () => {
    const own = await createAccount(baseUrl);
    const mine = await createPayment(own.api, referenceBody());
    const ws = wsCreateClient({ url: `${baseUrl.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${own.sk}` }, retryAttempts: 0 });
    const overWs = [1, 2].map(() => follow((sink) => ws.subscribe({ query: UPDATES, variables: { id: mine.id } }, sink)));
    try {
      await Promise.all(overWs.map((s) => s.until((m) => m.data?.paymentIntentUpdated.snapshot === true)));
      const abort = new AbortController();
      const third = await fetch(`${baseUrl}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${own.sk}`, 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ query: UPDATES, variables: { id: mine.id } }),
        signal: abort.signal,
      });
      expect(third.status).toBe(200);
      await expect429(await openStream(own.sk), 'subscriptions for this API key');
      abort.abort();
    } finally {
      for (const s of overWs) s.stop();
      await ws.dispose();
    }
  });

  it('the per-IP cap answers 429 (client tokens, which have no key, count per IP)', async () => {
    const tokens = await Promise.all(Array.from({ length: PER_IP + 1 }, () => mintToken(acct, payment.id)));
    const abort = new AbortController();
    const open = await Promise.all(tokens.slice(0, PER_IP).map((t) => openStream(t.token, abort.signal)));
    expect(open.map((r) => r.status)).toEqual(Array(PER_IP).fill(200));
    await expect429(await openStream(tokens[PER_IP]!.token), 'event streams from this IP address');
    abort.abort();
  });

  it('a TCP reset mid-stream frees the places: the gateway lives on and admits up to the cap again', async () => {
    const streams = [rawStream(acct.sk), rawStream(acct.sk)];
    await Promise.all(streams.map((s) => s.seen('"snapshot":true')));
    for (const s of streams) s.socket.resetAndDestroy();
    await waitFor(async () => openHttpSubscriptionCount(), (n) => n === 0);
    const abort = new AbortController();
    const again = [await openStream(acct.sk, abort.signal), await openStream(acct.sk, abort.signal)];
    expect(again.map((r) => r.status)).toEqual([200, 200]);
    abort.abort();
  });

  it('streams opened and abandoned before their first byte is read give their places back', async () => {
    for (let round = 0; round < 3; round++) {
      const abort = new AbortController();
      const streams = [rawStream(acct.sk), rawStream(acct.sk)];
      // Gone at once: the request may still be admitted, or already streaming.
      for (const s of streams) s.socket.destroy();
      await Promise.all(streams.map((s) => s.closed));
      await waitFor(async () => openConnectionCounts().sse, (n) => n === 0);
      expect((await openStream(acct.sk, abort.signal)).status).toBe(200);
      abort.abort();
    }
  });

  it('a client that never reads is dropped once its backlog passes the bound, and its place is freed', async () => {
    const own = await createAccount(baseUrl);
    // Each event is ~26 KB of metadata, sent 30 times over by aliases: ~0.8 MB a message.
    const aliases = Array.from({ length: 30 }, (_, i) => `d${i}: data`).join(' ');
    const stream = rawStream(own.sk, `subscription { events(types: [PAYMENT_CREATED]) { ${aliases} } }`, {});
    await stream.seen('HTTP/1.1 200');
    stream.socket.pause();
    const metadata = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, 'x'.repeat(500)]));
    // Far more than the socket buffers and the 1 MiB bound together: the gateway must drop it.
    for (let i = 0; i < 40 && openHttpSubscriptionCount() > 0; i += 4) {
      await Promise.all([0, 1, 2, 3].map(() => createPayment(own.api, referenceBody(25_000, { metadata }))));
    }
    await waitFor(async () => openHttpSubscriptionCount(), (n) => n === 0);
    stream.socket.resume();
    await within('the dropped socket to close', stream.closed);
    // The answer never got its end: the gateway cut it rather than finish it.
    expect(stream.text()).not.toContain('event: complete');
    // The gateway goes on serving.
    expect((await own.api.get(`/payment_intents?limit=1`)).status).toBe(200);
  });
});
