import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdempotencyModel } from '../../src/domain/idempotency/idempotencyModel';
import { idempotencyScopeId, runIdempotent } from '../../src/domain/idempotency/idempotencyService';
import { createAccount, expectError, expressBody, idempotencyKey } from './support/payments';
import type { TestServer } from '../support/server';
import { commandLog } from '../support/commandLog';
import { sharedGateway } from '../support/server';

/**
 * A POST /payment_intents makes fewer database round trips one after the other (bench/HISTORY.md, "Round
 * 14"): its number is reserved beside the Idempotency-Key's claim (src/operations/prefetch.ts, beforeClaim), and its
 * outbox is cleared while its answer is stored (IdempotentAttempt.answerAfter). What the client sees
 * must not change: the answer comes once everything is written, a wasted number is only a gap, and
 * bookkeeping that fails beside the answer does not fail the request.
 */
let server: TestServer;
beforeAll(async () => {
  server = await sharedGateway();
});
afterAll(async () => server?.stop());

const storedPayment = async (id: string) =>
  (await mongoose.connection.collection('payment_intents').findOne({ _id: id as never })) as unknown as { pending_events: unknown[]; pending_timers: unknown[]; seq: number };

describe('the steps of an idempotent POST /payment_intents', () => {
  it('answers once the outbox is cleared and the answer stored', async () => {
    const { api, id: accountId } = await createAccount(server.baseUrl);
    const key = idempotencyKey();
    const res = await api.post('/payment_intents', expressBody('923000000', 1200), { idempotencyKey: key });
    expect(res.status).toBe(201);
    // Read right after the answer, before anything else runs: both were written before it was sent.
    const [payment, stored] = await Promise.all([
      storedPayment(res.body.id),
      IdempotencyModel.findById(idempotencyScopeId({ accountId, method: 'POST', path: '/payment_intents', key })).lean(),
    ]);
    expect([payment.pending_events, payment.pending_timers]).toEqual([[], []]);
    expect(stored?.state).toBe('completed');
    const events = await api.get(`/events?limit=5`);
    expect(events.body.data.map((e: { type: string }) => e.type)).toContain('payment.created');
  });

  it("stores the answer while the outbox is cleared: the answer's write leaves before the clearing is answered", async () => {
    const { api } = await createAccount(server.baseUrl);
    const log = await commandLog(async () => expect((await api.post('/payment_intents', expressBody('923000000', 1300), { idempotencyKey: idempotencyKey() })).status).toBe(201));
    const clearing = log.indexOf('sent update payment_intents');
    expect(clearing).toBeGreaterThanOrEqual(0);
    expect(log.indexOf('sent update idempotency_keys')).toBeLessThan(log.indexOf('answered update payment_intents', clearing));
    expect(log.indexOf('sent update idempotency_keys')).toBeGreaterThan(log.indexOf('answered insert payment_intents'));
  });

  it('lists payments in creation order when replays and invalid bodies leave gaps in the numbers', async () => {
    const { api } = await createAccount(server.baseUrl);
    const first = await api.post('/payment_intents', expressBody('923000000', 1000), { idempotencyKey: 'gap-key-1' });
    // A replay and an invalid body each reserved a number beside their claim and used none.
    const replayed = await api.post('/payment_intents', expressBody('923000000', 1000), { idempotencyKey: 'gap-key-1' });
    expect([first.status, replayed.status, replayed.body, replayed.headers.get('idempotency-replayed')]).toEqual([201, 201, first.body, 'true']);
    expectError(await api.post('/payment_intents', { ...expressBody('923000000', 1000), amount: -5 }, { idempotencyKey: 'gap-key-2' }), 400, 'amount_out_of_range');
    const second = await api.post('/payment_intents', expressBody('923000000', 1001), { idempotencyKey: 'gap-key-3' });
    expect([first.status, second.status]).toEqual([201, 201]);
    expect((await storedPayment(second.body.id)).seq).toBeGreaterThan((await storedPayment(first.body.id)).seq);
    const list = await api.get('/payment_intents');
    expect(list.body.data.map((p: { id: string }) => p.id)).toEqual([second.body.id, first.body.id]);
  });

  it('waits for the work given to answerAfter, and keeps its answer when that work fails', async () => {
    const { id: accountId } = await createAccount(server.baseUrl);
    const request = (key: string) => ({ accountId, method: 'POST', path: '/payment_intents', key, body: { n: 1 }, requestId: 'req_test' });
    let finished = false;
    const waited = await runIdempotent(request(idempotencyKey()), async (attempt) => {
      attempt.answerAfter(new Promise((resolve) => setTimeout(resolve, 150)).then(() => (finished = true)));
      return { status: 201, body: { ok: 1 } };
    });
    expect([waited.status, finished]).toEqual([201, true]);

    const key = idempotencyKey();
    const failed = await runIdempotent(request(key), async (attempt) => {
      attempt.answerAfter(Promise.reject(new Error('outbox clearing lost')));
      return { status: 201, body: { ok: 2 } };
    });
    expect([failed.status, failed.json]).toEqual([201, '{"ok":2}']);
    const replay = await runIdempotent(request(key), async () => ({ status: 500, body: 'must not run' }));
    expect([replay.replayed, replay.json]).toEqual([true, '{"ok":2}']);
  });
});
