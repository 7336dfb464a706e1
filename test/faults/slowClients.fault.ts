import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../support/accounts';
import { startTestServer, type TestServer } from '../support/server';
import { sleep } from './support/fixtures';

/**
 * Slow and greedy clients (src/http/httpServer.ts): sockets that trickle their headers are closed at
 * the 15 s header deadline, sockets that trickle a body at the 30 s request deadline, while everyone
 * else is served; one address holding the most open connections gets a 429 in the specification's
 * envelope for the next one, and is served again once it closes some.
 */
const CAP = 60;
const SLOW_HEADERS = 25;
const SLOW_BODIES = 15;
/** Deadlines are checked every second, and the machine is shared: a socket may close that much later. */
const SLACK_MS = 4_000;

let server: TestServer;
let account: TestAccount;
let port: number;

beforeAll(async () => {
  server = await startTestServer({ HTTP_MAX_CONNECTIONS_PER_IP: String(CAP) });
  port = Number(new URL(server.baseUrl).port);
  account = await createAccount(server.baseUrl, 'slow clients');
});

afterAll(async () => {
  await server?.stop();
});

interface Trickler {
  /** Milliseconds from the first byte to the server closing the socket; undefined while it is open. */
  closedAfterMs?: number;
  /** What the server wrote before closing. */
  answer: string;
  destroy(): void;
}

/** A socket that sends `first`, then one more byte of `rest` each second, for as long as the server keeps it. */
function trickle(first: string, rest: string): Promise<Trickler> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const started = Date.now();
    const t: Trickler = { answer: '', destroy: () => socket.destroy() };
    let i = 0;
    const timer = setInterval(() => {
      if (!socket.destroyed && i < rest.length) socket.write(rest[i++]!);
    }, 1_000);
    socket.on('data', (chunk) => (t.answer += chunk.toString()));
    socket.on('close', () => {
      clearInterval(timer);
      t.closedAfterMs = Date.now() - started;
    });
    socket.on('error', () => undefined);
    socket.once('connect', () => {
      socket.write(first);
      resolve(t);
    });
    socket.once('error', reject);
  });
}

describe('slow clients', () => {
  it('closes header and body tricklers at their deadlines and serves everyone else meanwhile', async () => {
    const headerFirst = `GET /v1/payment_intents HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${account.sk}\r\n`;
    const slowHeaders = await Promise.all(Array.from({ length: SLOW_HEADERS }, () => trickle(headerFirst, 'X-Slow: ' + 'a'.repeat(200))));
    const bodyFirst =
      `POST /v1/payment_intents HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${account.sk}\r\n` +
      'Content-Type: application/json\r\nIdempotency-Key: slow-body-0001\r\nContent-Length: 1000\r\n\r\n{';
    const slowBodies = await Promise.all(Array.from({ length: SLOW_BODIES }, () => trickle(bodyFirst, ' '.repeat(999))));

    // Everyone else is served while the tricklers hold their sockets.
    const reads: number[] = [];
    const until = Date.now() + 20_000;
    while (Date.now() < until) {
      reads.push((await account.api.get('/payment_intents?limit=1')).status);
      await sleep(500);
    }
    expect(reads.every((s) => s === 200)).toBe(true);

    for (const t of slowHeaders) {
      expect(t.closedAfterMs, 'a header trickler outlived the 15 s deadline').toBeDefined();
      expect(t.closedAfterMs!).toBeGreaterThanOrEqual(15_000 - 1_000);
      expect(t.closedAfterMs!).toBeLessThan(15_000 + SLACK_MS);
    }
    await sleep(30_000 + SLACK_MS - 20_000);
    for (const t of slowBodies) {
      expect(t.closedAfterMs, 'a body trickler outlived the 30 s deadline').toBeDefined();
      expect(t.closedAfterMs!).toBeGreaterThanOrEqual(30_000 - 1_000);
      expect(t.closedAfterMs!).toBeLessThan(30_000 + SLACK_MS);
      expect(t.answer).toMatch(/^HTTP\/1\.1 408/);
    }
    // No trickled POST made a payment.
    const list = await account.api.get('/payment_intents?limit=10');
    expect(list.body.data).toHaveLength(0);
  });

  it('answers the connections over the per-address cap 429 in the envelope, and serves again once some close', async () => {
    // CAP + 3 raw sockets, opened one after the other well within the header deadline, sending nothing:
    // the server answers those over the cap at once (this process's fetch pool may hold a socket or
    // two already, which count too) and leaves the others waiting for a request.
    const sockets = await Promise.all(
      Array.from({ length: CAP + 3 }, () => {
        const socket = net.connect(port, '127.0.0.1');
        const seen = { socket, answer: '' };
        socket.on('data', (chunk) => (seen.answer += chunk.toString()));
        socket.on('error', () => undefined);
        return new Promise<typeof seen>((resolve) => socket.once('connect', () => resolve(seen)));
      }),
    );
    await sleep(1_500);
    try {
      const refused = sockets.filter((s) => s.answer !== '');
      expect(refused.length).toBeGreaterThanOrEqual(3);
      expect(sockets.length - refused.length).toBeLessThanOrEqual(CAP);
      for (const { answer } of refused) {
        expect(answer).toMatch(/^HTTP\/1\.1 429 /);
        expect(answer).toMatch(/\r\nRetry-After: 1\r\n/);
        const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { error: { code: string; request_id: string } };
        expect(body.error.code).toBe('rate_limit_exceeded');
        expect(body.error.request_id).toMatch(/^req_/);
      }
    } finally {
      for (const s of sockets) s.socket.destroy();
    }
    await sleep(200);
    expect((await account.api.get('/payment_intents?limit=1')).status).toBe(200);
  });
});
