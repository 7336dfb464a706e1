import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, idempotencyKey, type TestAccount } from '../support/accounts';
import { startTestServer, type TestServer } from '../support/server';
import { waitFor } from '../support/wait';

/**
 * The write gate (src/http/writeGate.ts) on the real gateway: with WRITE_CONCURRENCY=1
 * and the event loop kept busy (the gateway runs in this process), one write is handled at a time, the
 * next waits before anything is done for it, reads still pass, and a write whose client leaves while it
 * waits is never run.
 */
let server: TestServer;
let account: TestAccount;
beforeAll(async () => {
  server = await startTestServer({ WRITE_CONCURRENCY: '1' });
  account = await createAccount(server.baseUrl);
});
afterAll(async () => server?.stop());

const gate = () => server.gateway.writeGate;
const until = (what: string, cond: () => boolean) =>
  waitFor(async () => cond(), (v) => v, 10_000, 10).catch((err: unknown) => {
    throw new Error(`${what}: ${String(err)} [inFlight ${gate().inFlight}, waiting ${gate().waiting}]`);
  });

/** Keeps this thread's event loop busy (30 ms at a time, I/O handled in between) until stopped. */
function saturate(): () => void {
  let on = true;
  const spin = () => {
    if (!on) return;
    const end = Date.now() + 30;
    while (Date.now() < end) {
      // busy
    }
    setImmediate(spin);
  };
  spin();
  return () => {
    on = false;
  };
}

const paymentBody = (amount: number) => JSON.stringify({ amount, currency: 'AOA', payment_method: 'multicaixa_reference' });

/** A POST /v1/payment_intents sent through node:http, so that its body can be held back and its socket closed. */
function rawPost(key: string, body: string) {
  const url = new URL(server.baseUrl);
  const req = http.request({
    host: url.hostname,
    port: url.port,
    method: 'POST',
    path: '/v1/payment_intents',
    agent: false,
    headers: { authorization: `Bearer ${account.sk}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'idempotency-key': key },
  });
  const answer = new Promise<{ status: number; body: any }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
  });
  answer.catch(() => undefined);
  return { req, answer };
}

describe('write gate', () => {
  it('while the thread is saturated, holds writes past the cap in arrival order, passes reads, and never runs a write whose client left', async () => {
    const gate = server.gateway.writeGate;
    const stop = saturate();
    try {
      // A: let in (the cap is free), then held in flight by its unfinished body.
      const bodyA = paymentBody(1_000);
      const a = rawPost(idempotencyKey(), bodyA);
      a.req.write(bodyA.slice(0, 10));
      await until('A in flight', () => gate.inFlight === 1);

      // B waits behind it once the gate counts the thread saturated (from its next sample on); the sign
      // is B waiting, not a sleep. Until then B is let in: its body is held back, so it does nothing,
      // and it leaves (its place freed) for a new B.
      const bodyB = paymentBody(2_000);
      let b = rawPost(idempotencyKey(), bodyB);
      b.req.write(bodyB.slice(0, 10));
      await until('B let in or waiting', () => gate.waiting === 1 || gate.inFlight === 2);
      while (gate.waiting === 0) {
        b.req.destroy();
        await until('the early B gone', () => gate.inFlight === 1);
        b = rawPost(idempotencyKey(), bodyB);
        b.req.write(bodyB.slice(0, 10));
        await until('B let in or waiting', () => gate.waiting === 1 || gate.inFlight === 2);
      }
      // Complete as it now is, B still waits; C too, until its client gives up.
      b.req.end(bodyB.slice(10));
      const c = rawPost(idempotencyKey(), paymentBody(3_000));
      c.req.end(paymentBody(3_000));
      await until('B and C waiting', () => gate.waiting === 2);

      // Reads pass the held writes.
      const list = await account.api.get('/payment_intents');
      expect(list.status).toBe(200);
      expect(list.body.data).toHaveLength(0);

      c.req.destroy();
      await until('C gone from the queue', () => gate.waiting === 1);

      a.req.end(bodyA.slice(10));
      const [answerA, answerB] = await Promise.all([a.answer, b.answer]);
      expect(answerA.status).toBe(201);
      expect(answerB.status).toBe(201);
      expect(answerB.body.amount).toBe(2_000);
      // B ran after A: its payment is the newer of the two.
      expect(new Date(answerB.body.created_at).getTime()).toBeGreaterThanOrEqual(new Date(answerA.body.created_at).getTime());
    } finally {
      stop();
    }
    await until('the gate empty', () => gate.inFlight === 0 && gate.waiting === 0);

    // C never ran: no payment of its amount.
    const list = await account.api.get('/payment_intents');
    expect(list.body.data.map((p: { amount: number }) => p.amount).sort()).toEqual([1_000, 2_000]);
  });
});
