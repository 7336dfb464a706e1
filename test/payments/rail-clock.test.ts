import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  advance, createAccount, createPayment, expectError, expressBody, getPayment, paymentEvents,
} from './support/payments';
import type { TestServer } from '../support/server';
import { sharedGateway } from '../support/server';

/** Every scenario through the sandbox clock: an advance fires the due rail steps before it answers. */
let server: TestServer;
beforeAll(async () => {
  server = await sharedGateway();
});
afterAll(async () => server?.stop());

/**
 * `ts` is `ms` after the intent's creation. A step fired by an advance carries exactly its due time; one
 * that the real-time poller reached first (a slow, loaded machine) a little later: allow a second.
 */
function expectAt(ts: string, pi: any, ms: number): void {
  const delta = Date.parse(ts) - Date.parse(pi.created_at);
  expect(delta).toBeGreaterThanOrEqual(ms);
  expect(delta).toBeLessThan(ms + 1_000);
}

describe('sandbox clock', () => {
  it('reads and advances the account clock, never backwards, and validates seconds', async () => {
    const { api } = await createAccount(server.baseUrl);
    const before = await api.get('/sandbox/clock');
    expect(before.status).toBe(200);
    expect(before.body).toEqual({ object: 'sandbox_clock', now: expect.any(String), offset_seconds: 0 });
    expect(Math.abs(Date.parse(before.body.now) - Date.now())).toBeLessThan(5_000);

    const after = await advance(api, 3_600);
    expect(after.offset_seconds).toBe(3_600);
    expect(Date.parse(after.now) - Date.now()).toBeGreaterThan(3_590_000);
    expect((await api.get('/sandbox/clock')).body.offset_seconds).toBe(3_600);

    for (const seconds of [0, -5, 1.5, 31_536_001]) {
      expectError(await api.post('/sandbox/clock/advance', { seconds }), 400, 'invalid_request');
    }
    expect((await api.get('/sandbox/clock')).body.offset_seconds).toBe(3_600);

    // The clock of one account does not move another's.
    const other = await createAccount(server.baseUrl);
    expect((await other.api.get('/sandbox/clock')).body.offset_seconds).toBe(0);
  });

  it('timestamps new objects with the account clock', async () => {
    const { api } = await createAccount(server.baseUrl);
    await advance(api, 86_400);
    const pi = await createPayment(api, expressBody('923000000'));
    expect(Date.parse(pi.created_at) - Date.now()).toBeGreaterThan(86_390_000);
  });
});

describe('express scenarios through the sandbox clock', () => {
  // Note on real time: after an advance, the account's later timers come due in real time sooner (a step
  // at +5 s is 3 s of real time away after advancing 2 s). Assertions on intermediate states therefore
  // use a scenario whose next step is far away (923000002 stays PROCESSING until +10 s).
  it('PROCESSING at +2 s; 923000000 SUCCEEDED at +5 s, both steps chained inside one advance', async () => {
    const { api } = await createAccount(server.baseUrl);
    const slow = await createPayment(api, expressBody('923000002', 20_000));
    await advance(api, 2);
    const processing = await getPayment(api, slow.id);
    expect(processing.status).toBe('PROCESSING');
    expectAt(processing.updated_at, slow, 2_000);

    const pi = await createPayment(api, expressBody('923000000', 20_000));
    await advance(api, 10); // both steps of pi fall inside this one span
    const done = await getPayment(api, pi.id);
    expect(done).toMatchObject({ status: 'SUCCEEDED', fee: 300, fee_version: 1, failure_code: null });
    expectAt(done.updated_at, pi, 5_000);
    const events = await paymentEvents(api, pi.id);
    expect(events.map((e) => e.type)).toEqual(['payment.created', 'payment.succeeded']);
    expectAt(events[1].created_at, pi, 5_000);
    expect(events[1].data).toEqual(done);
  });

  it('923000001 and 923000003: FAILED with their failure codes at +5 s', async () => {
    const { api } = await createAccount(server.baseUrl);
    const rejected = await createPayment(api, expressBody('923000001'));
    const broke = await createPayment(api, expressBody('923000003'));
    await advance(api, 6);
    for (const [pi, code] of [[rejected, 'rejected_by_customer'], [broke, 'insufficient_funds']] as const) {
      const done = await getPayment(api, pi.id);
      expect(done).toMatchObject({ status: 'FAILED', failure_code: code, fee: null, fee_version: null });
      expectAt(done.updated_at, pi, 5_000);
      const events = await paymentEvents(api, pi.id);
      expect(events.map((e) => e.type)).toEqual(['payment.created', 'payment.failed']);
      expect(events[1].data.failure_code).toBe(code);
    }
  });

  it('923000002: UNKNOWN at +10 s, then SUCCEEDED at +30 s with payment.succeeded then payment.reconciled', async () => {
    const { api } = await createAccount(server.baseUrl);
    const pi = await createPayment(api, expressBody('923000002', 40_000));
    await advance(api, 5);
    expect((await getPayment(api, pi.id)).status).toBe('PROCESSING');
    await advance(api, 6);
    const unknown = await getPayment(api, pi.id);
    expect(unknown.status).toBe('UNKNOWN');
    expectAt(unknown.updated_at, pi, 10_000);
    // Cancel is not in the table for UNKNOWN: 409, nothing changes.
    expectError(await api.post(`/payment_intents/${pi.id}/cancel`), 409, 'payment_already_processed');
    await advance(api, 20);
    const done = await getPayment(api, pi.id);
    expect(done).toMatchObject({ status: 'SUCCEEDED', fee: 600, fee_version: 1 });
    expectAt(done.updated_at, pi, 30_000);
    const events = await paymentEvents(api, pi.id);
    expect(events.map((e) => e.type)).toEqual(['payment.created', 'payment.unknown', 'payment.succeeded', 'payment.reconciled']);
    expect(events[1].data.status).toBe('UNKNOWN');
    expect(events[2].data).toEqual(done);
    expect(events[3].data).toEqual(done);
    // Newest first in GET /events: reconciled above succeeded, deterministically.
    const listed = (await api.get('/events')).body.data.map((e: any) => e.type);
    expect(listed.slice(0, 2)).toEqual(['payment.reconciled', 'payment.succeeded']);
  });

  it('923000004: FAILED provider_unavailable at +2 s straight from PENDING', async () => {
    const { api } = await createAccount(server.baseUrl);
    const pi = await createPayment(api, expressBody('923000004'));
    expect(pi.status).toBe('PENDING');
    await advance(api, 2);
    const done = await getPayment(api, pi.id);
    expect(done).toMatchObject({ status: 'FAILED', failure_code: 'provider_unavailable' });
    expectAt(done.updated_at, pi, 2_000);
    expect((await paymentEvents(api, pi.id)).map((e) => e.type)).toEqual(['payment.created', 'payment.failed']);
  });

  it('any other 9XXXXXXXX succeeds at +5 s; the same mobile always gives the same outcome', async () => {
    const { api } = await createAccount(server.baseUrl);
    const a = await createPayment(api, expressBody('912345678'));
    const b = await createPayment(api, expressBody('912345678'));
    const c = await createPayment(api, expressBody('999999999'));
    await advance(api, 5);
    for (const pi of [a, b, c]) {
      const done = await getPayment(api, pi.id);
      expect(done.status).toBe('SUCCEEDED');
      expectAt(done.updated_at, pi, 5_000);
    }
  });

  it('cancels PROCESSING; SUCCEEDED, FAILED and CANCELLED refuse to cancel with nothing changed', async () => {
    const { api } = await createAccount(server.baseUrl);
    const processing = await createPayment(api, expressBody('923000002'));
    await advance(api, 3);
    expect((await getPayment(api, processing.id)).status).toBe('PROCESSING');
    const cancelled = await api.post(`/payment_intents/${processing.id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('CANCELLED');
    await advance(api, 60);
    expect((await getPayment(api, processing.id)).status).toBe('CANCELLED');
    expect((await paymentEvents(api, processing.id)).map((e) => e.type)).toEqual(['payment.created', 'payment.cancelled']);

    const succeeded = await createPayment(api, expressBody('923000000'));
    const failed = await createPayment(api, expressBody('923000004'));
    await advance(api, 6);
    for (const [pi, status] of [[succeeded, 'SUCCEEDED'], [failed, 'FAILED'], [processing, 'CANCELLED']] as const) {
      const before = await getPayment(api, pi.id);
      expect(before.status).toBe(status);
      expectError(await api.post(`/payment_intents/${pi.id}/cancel`), 409, 'payment_already_processed');
      expect(await getPayment(api, pi.id)).toEqual(before);
    }
  });
});
