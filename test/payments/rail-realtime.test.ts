import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TimerModel } from '../../src/platform/timers/timerModel';
import { createAccount, createPayment, expressBody, getPayment, paymentEvents, startPaymentsServer, waitFor } from './support/payments';
import type { TestServer } from '../support/server';

/**
 * The two headline scenarios in real time (no sandbox clock): PENDING, PROCESSING at about 2 s, the
 * outcome at about 5 s. Each poll is recorded with the time its request started and ended, so the
 * checks hold however slow the machine answers: the status was what the poll saw at some moment
 * within that interval.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startPaymentsServer();
});
afterAll(async () => server?.stop());

interface Observation {
  status: string;
  /** ms since creation when the request started / ended */
  from: number;
  to: number;
}

/** Reads the payment every 100 ms until it is `final`, recording each read with its interval. */
async function observe(api: any, id: string, createdAt: number, final: string): Promise<Observation[]> {
  const seen: Observation[] = [];
  try {
    await waitFor(
      async () => {
        const from = Date.now() - createdAt;
        const pi = await getPayment(api, id);
        seen.push({ status: pi.status, from, to: Date.now() - createdAt });
        return pi.status as string;
      },
      (status) => status === final,
      20_000,
      100,
    );
  } catch (err) {
    throw new Error(`did not reach ${final}: ${JSON.stringify(seen)}`, { cause: err });
  }
  return seen;
}

const ORDER = ['PENDING', 'PROCESSING'];

describe('express rail in real time', () => {
  it.concurrent.each([
    ['923000000', 'SUCCEEDED', null, 'payment.succeeded'],
    ['923000001', 'FAILED', 'rejected_by_customer', 'payment.failed'],
  ])('%s: PENDING, PROCESSING at ~2 s, %s at ~5 s', async (mobile, final, failureCode, finalEvent) => {
    const { api } = await createAccount(server.baseUrl);
    const pi = await createPayment(api, expressBody(mobile, 10_000));
    expect(pi.status).toBe('PENDING');
    const createdAt = Date.parse(pi.created_at); // account clock = real clock for a fresh account
    const seen = await observe(api, pi.id, createdAt, final);

    // Statuses only move forward: PENDING…, PROCESSING…, then the final one.
    const ranks = seen.map((o) => (o.status === final ? 2 : ORDER.indexOf(o.status)));
    expect(ranks.every((r) => r >= 0)).toBe(true);
    expect([...ranks].sort((x, y) => x - y)).toEqual(ranks);
    expect(seen.some((o) => o.status === 'PROCESSING'), JSON.stringify(seen)).toBe(true);
    // Never PROCESSING before 2 s nor final before 5 s; never still PENDING after ~2.5 s, nor short of
    // final after ~5.5 s (with room for a loaded machine).
    for (const o of seen) {
      if (o.status === 'PENDING') expect(o.from).toBeLessThan(4_000);
      if (o.status === 'PROCESSING') {
        expect(o.to).toBeGreaterThanOrEqual(2_000);
        expect(o.from).toBeLessThan(7_500);
      }
      if (o.status === final) expect(o.to).toBeGreaterThanOrEqual(5_000);
    }

    // Server side: when each rail step actually started.
    // The final transition lands a moment before its timer is marked done.
    const steps = await waitFor(
      () => TimerModel.find({ ref_id: pi.id, kind: 'payment.rail_step' }).sort({ due_at: 1 }).lean(),
      (ts) => ts.length === 2 && ts.every((t) => t.state === 'done'),
      5_000,
      50,
    );
    expect(steps.map((t) => [t.state, t.attempts])).toEqual([['done', 1], ['done', 1]]);
    const startedAfter = steps.map((t) => new Date(t.claimed_at!).getTime() - createdAt);
    expect(startedAfter[0]).toBeGreaterThanOrEqual(2_000);
    expect(startedAfter[0]).toBeLessThan(4_000);
    expect(startedAfter[1]).toBeGreaterThanOrEqual(5_000);
    expect(startedAfter[1]).toBeLessThan(7_500);

    const done = await getPayment(api, pi.id);
    expect(done.failure_code).toBe(failureCode);
    const sinceCreation = Date.parse(done.updated_at) - createdAt;
    expect(sinceCreation).toBeGreaterThanOrEqual(5_000);
    expect(sinceCreation).toBeLessThan(7_500);
    if (final === 'SUCCEEDED') expect(done).toMatchObject({ fee: 150, fee_version: 1 });
    else expect(done).toMatchObject({ fee: null, fee_version: null });

    const events = await paymentEvents(api, pi.id);
    expect(events.map((e) => e.type)).toEqual(['payment.created', finalEvent]);
    expect(events[1].data).toEqual(done);
    expect(events[1].created_at).toBe(done.updated_at);
  });
});
