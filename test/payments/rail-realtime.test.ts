import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TimerModel } from '../../src/platform/timers/timerModel';
import { createAccount, createPayment, expressBody, getPayment, paymentEvents, waitFor } from './support/payments';
import type { TestServer } from '../support/server';
import { sharedGateway } from '../support/server';

/**
 * The two headline scenarios in real time (no sandbox clock): PENDING, PROCESSING due at 2 s, the
 * outcome due at 5 s. Each poll is recorded with the time its request started and ended, so the
 * checks hold however slow the machine answers: the status was what the poll saw at some moment
 * within that interval. Only "never early" is checked here; how late a step may be under load is a
 * measurement, not a pass/fail bound (bench:rail, bench/HISTORY.md "Issue 55").
 */
let server: TestServer;
beforeAll(async () => {
  server = await sharedGateway();
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
  ])('%s: PENDING, PROCESSING due at 2 s, %s due at 5 s, never earlier', async (mobile, final, failureCode, finalEvent) => {
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
    // Never PROCESSING before 2 s nor final before 5 s (a slow machine makes them later, never earlier).
    for (const o of seen) {
      if (o.status === 'PROCESSING') expect(o.to).toBeGreaterThanOrEqual(2_000);
      if (o.status === final) expect(o.to).toBeGreaterThanOrEqual(5_000);
    }

    // Server side: each rail step is due at its time and started no earlier.
    // The final transition lands a moment before its timer is marked done.
    const steps = await waitFor(
      () => TimerModel.find({ ref_id: pi.id, kind: 'payment.rail_step' }).sort({ due_at: 1 }).lean(),
      (ts) => ts.length === 2 && ts.every((t) => t.state === 'done'),
      20_000,
      50,
    );
    expect(steps.map((t) => [t.state, t.attempts])).toEqual([['done', 1], ['done', 1]]);
    expect(steps.map((t) => new Date(t.due_at).getTime() - createdAt)).toEqual([2_000, 5_000]);
    for (const t of steps) expect(new Date(t.claimed_at!).getTime()).toBeGreaterThanOrEqual(new Date(t.due_at).getTime());

    const done = await getPayment(api, pi.id);
    expect(done.failure_code).toBe(failureCode);
    const sinceCreation = Date.parse(done.updated_at) - createdAt;
    expect(sinceCreation).toBeGreaterThanOrEqual(5_000);
    if (final === 'SUCCEEDED') expect(done).toMatchObject({ fee: 150, fee_version: 1 });
    else expect(done).toMatchObject({ fee: null, fee_version: null });

    const events = await paymentEvents(api, pi.id);
    expect(events.map((e) => e.type)).toEqual(['payment.created', finalEvent]);
    expect(events[1].data).toEqual(done);
    expect(events[1].created_at).toBe(done.updated_at);
  });
});
