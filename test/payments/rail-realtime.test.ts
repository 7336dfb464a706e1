import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createPayment, expressBody, getPayment, paymentEvents, sleep, startPaymentsServer } from './support/payments';
import type { TestServer } from '../support/server';

/**
 * The two headline scenarios in real time (no sandbox clock): PENDING, PROCESSING at about 2 s, the
 * outcome at about 5 s. Windows are generous; what must hold is the order and the rough timing.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startPaymentsServer();
});
afterAll(async () => server?.stop());

interface Seen {
  status: string;
  atMs: number;
}

/** Polls every 100 ms and records when each status was first seen, until `final` or the deadline. */
async function observe(api: any, id: string, createdAt: number, final: string): Promise<Seen[]> {
  const seen: Seen[] = [];
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const pi = await getPayment(api, id);
    if (seen.at(-1)?.status !== pi.status) seen.push({ status: pi.status, atMs: Date.now() - createdAt });
    if (pi.status === final) return seen;
    await sleep(100);
  }
  throw new Error(`did not reach ${final}: ${JSON.stringify(seen)}`);
}

describe('express rail in real time', () => {
  it.concurrent.each([
    ['923000000', 'SUCCEEDED', null, 'payment.succeeded'],
    ['923000001', 'FAILED', 'rejected_by_customer', 'payment.failed'],
  ])('%s: PENDING, PROCESSING at ~2 s, %s at ~5 s', async (mobile, final, failureCode, finalEvent) => {
    const { api } = await createAccount(server.baseUrl);
    const started = Date.now();
    const pi = await createPayment(api, expressBody(mobile, 10_000));
    expect(pi.status).toBe('PENDING');
    const seen = await observe(api, pi.id, started, final);

    expect(seen.map((s) => s.status)).toEqual(['PENDING', 'PROCESSING', final]);
    const processingAt = seen[1]!.atMs;
    const finalAt = seen[2]!.atMs;
    expect(processingAt).toBeGreaterThanOrEqual(1_900);
    expect(processingAt).toBeLessThan(4_000);
    expect(finalAt).toBeGreaterThanOrEqual(4_900);
    expect(finalAt).toBeLessThan(8_000);

    const done = await getPayment(api, pi.id);
    expect(done.failure_code).toBe(failureCode);
    // Timestamps are those of the rail steps, measured from creation.
    const sinceCreation = Date.parse(done.updated_at) - Date.parse(done.created_at);
    expect(sinceCreation).toBeGreaterThanOrEqual(5_000);
    expect(sinceCreation).toBeLessThan(6_000);
    if (final === 'SUCCEEDED') expect(done).toMatchObject({ fee: 150, fee_version: 1 });
    else expect(done).toMatchObject({ fee: null, fee_version: null });

    const events = await paymentEvents(api, pi.id);
    expect(events.map((e) => e.type)).toEqual(['payment.created', finalEvent]);
    expect(events[1].data).toEqual(done);
    expect(events[1].created_at).toBe(done.updated_at);
  });
});
