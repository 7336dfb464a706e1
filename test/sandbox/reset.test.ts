import { beforeEach, describe, expect, it } from 'vitest';
import { createAccount, idempotencyKey, type TestAccount } from '../support/accounts';
import { accountEvents, advanceClock, createPayment, expectError, expressBody, getPayment, referenceBody } from '../support/payments';
import { createEndpoint, deliveries } from '../support/webhooks';
import { waitFor } from '../support/wait';
import { gqlData } from '../graphql/support';
import { cookieData, signIn } from '../dashboard/sessionSupport';
import { useGatewayAndReceiver } from '../webhooks/support/gateway';
import { TimerModel } from '../../src/platform/timers/timerModel';

/** POST /v1/sandbox/reset and GraphQL resetSandbox (issue 40, contract decisions "Sandbox reset"). */
const gw = useGatewayAndReceiver({}, { jobs: true });
let account: TestAccount;
beforeEach(async () => {
  account = await createAccount(gw.server.baseUrl);
  gw.receiver.reply = () => ({ status: 200 });
});

const ZEROS = { payment_intents: 0, refunds: 0, events: 0, webhook_deliveries: 0, payment_links: 0, checkout_sessions: 0, logs: 0 };

describe('POST /sandbox/reset', () => {
  it('deletes the test data and its timers, resets the clock, and keeps keys and endpoints', async () => {
    const { api } = account;
    const hook = `${gw.receiver.url}/hooks/reset`;
    const endpoint = await createEndpoint(api, hook);
    const restricted = (await api.post('/api_keys', { name: 'reader', permissions: ['payment_intents:read'] })).body.secret;

    // A paid payment with a refund on its way, a reference payment waiting (72 h expiry), links, a session.
    const paid = await createPayment(api, expressBody());
    await advanceClock(api, 10);
    expect((await getPayment(api, paid.id)).status).toBe('SUCCEEDED');
    const refund = await api.post('/refunds', { payment_intent: paid.id, amount: 1_000 }, { idempotencyKey: idempotencyKey() });
    expect(refund.status).toBe(201);
    const replayKey = idempotencyKey();
    const waiting = await createPayment(api, referenceBody(), replayKey);
    const pendingExpress = await createPayment(api, expressBody());
    const link = (await api.post('/payment_links', { amount: 7_000 })).body;
    const session = (await api.post('/checkout/sessions', { amount: 5_000 })).body;
    await waitFor(() => deliveries(api, endpoint.id), (list) => list.some((d) => d.state === 'DELIVERED'));
    expect((await api.get('/sandbox/clock')).body.offset_seconds).toBeGreaterThanOrEqual(10);

    const res = await api.post('/sandbox/reset');
    const resetAnswered = Date.now();
    expect(res.status, res.text).toBe(200);
    expect(res.body.object).toBe('sandbox_reset');
    expect(res.body.deleted).toMatchObject({ payment_intents: 3, refunds: 1, payment_links: 1, checkout_sessions: 1 });
    expect(res.body.deleted.events).toBeGreaterThanOrEqual(4);
    expect(res.body.deleted.webhook_deliveries).toBeGreaterThanOrEqual(1);
    expect(res.body.deleted.logs).toBeGreaterThanOrEqual(8);

    // Lists are empty, old ids are gone, the clock is real time again.
    expect((await api.get('/payment_intents')).body.data).toEqual([]);
    expect(await accountEvents(api)).toEqual([]);
    expect((await api.get('/payment_links')).body.data).toEqual([]);
    expect(await deliveries(api, endpoint.id)).toEqual([]);
    // The log holds only what came after: the reset itself and the reads above.
    const logs = (await api.get('/logs?limit=100')).body.data;
    expect(logs.map((l: any) => l.path)).not.toContain('/v1/refunds');
    expect(logs.some((l: any) => l.method === 'POST' && l.path === '/v1/payment_intents')).toBe(false);
    for (const path of [`/payment_intents/${paid.id}`, `/refunds/${refund.body.id}`, `/payment_links/${link.id}`, `/checkout/sessions/${session.id}`]) {
      expectError(await api.get(path), 404, 'resource_not_found');
    }
    expect((await api.get('/sandbox/clock')).body.offset_seconds).toBe(0);
    const scheduled = await TimerModel.countDocuments({ account_id: account.id, state: 'scheduled' });
    expect(scheduled).toBe(0);

    // Keys and endpoints still work.
    expect((await api.get('/webhook_endpoints')).body.data.map((e: any) => e.id)).toEqual([endpoint.id]);
    expect((await api.withKey(restricted).get('/payment_intents')).status).toBe(200);

    // The old Idempotency-Key creates a new payment rather than replaying a deleted one.
    const again = await api.post('/payment_intents', referenceBody(), { idempotencyKey: replayKey });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotency-replayed')).toBeNull();
    expect(again.body.id).not.toBe(waiting.id);

    // A new payment runs its rail as usual, with its webhook; the old ones' timers never fire: 73 h
    // later (past the old reference's expiry), no event names them.
    const fresh = await createPayment(api, expressBody());
    await advanceClock(api, 73 * 3600);
    expect((await getPayment(api, fresh.id)).status).toBe('SUCCEEDED');
    await gw.receiver.waitFor((r) => r.path === '/hooks/reset' && r.rawBody.includes(`"type":"payment.succeeded"`) && r.rawBody.includes(fresh.id), 1);
    const old = new Set([paid.id, waiting.id, pendingExpress.id, refund.body.id]);
    const events = await accountEvents(api);
    expect(events.some((e) => e.data.id === fresh.id)).toBe(true);
    expect(events.filter((e) => old.has(e.data.id) || old.has(e.data.payment_intent))).toEqual([]);
    const sentForOldAfterReset = gw.receiver.received.filter((r) => r.at > resetAnswered && [...old].some((id) => r.rawBody.includes(id)));
    expect(sentForOldAfterReset).toEqual([]);
  });

  it('a second reset answers zeros; GraphQL resetSandbox answers the counts and the clock', async () => {
    const { api } = account;
    await createPayment(api, referenceBody());
    await advanceClock(api, 3600);
    const data = await gqlData(
      gw.server.baseUrl,
      account.sk,
      'mutation { resetSandbox { paymentIntents refunds events webhookDeliveries paymentLinks checkoutSessions logs clock { offsetSeconds now } } }',
    );
    expect(data.resetSandbox).toMatchObject({ paymentIntents: 1, refunds: 0, paymentLinks: 0, checkoutSessions: 0, clock: { offsetSeconds: 0 } });
    expect(Math.abs(Date.parse(data.resetSandbox.clock.now) - Date.now())).toBeLessThan(60_000);

    // Only the reset's own request has been logged since.
    const second = await api.post('/sandbox/reset');
    expect(second.status).toBe(200);
    expect(second.body).toEqual({ object: 'sandbox_reset', deleted: { ...ZEROS, logs: second.body.deleted.logs } });
    expect(second.body.deleted.logs).toBeLessThanOrEqual(1);
    const third = await api.post('/sandbox/reset');
    expect(third.body.deleted).toEqual({ ...ZEROS, logs: 1 });

    // The dashboard signed in with the secret key may reset too (its Clock page's button).
    await createPayment(api, referenceBody());
    const session = await signIn(gw.server.baseUrl, account.sk);
    const byDashboard = await cookieData(gw.server.baseUrl, session.cookie!, 'mutation { resetSandbox { paymentIntents clock { offsetSeconds } } }');
    expect(byDashboard.resetSandbox).toEqual({ paymentIntents: 1, clock: { offsetSeconds: 0 } });
  });

  it('leaves other accounts alone: one mid-rail completes, with its webhook, while another resets', async () => {
    const other = await createAccount(gw.server.baseUrl);
    const endpoint = await createEndpoint(other.api, `${gw.receiver.url}/hooks/other`);
    await advanceClock(other.api, 30);
    // Its express payment is mid-rail (PENDING, steps at +2 s and +5 s) when the first account resets.
    const midRail = await createPayment(other.api, expressBody());
    const waiting = await createPayment(other.api, referenceBody());
    await createPayment(account.api, expressBody());
    expect((await account.api.post('/sandbox/reset')).status).toBe(200);

    const done = await waitFor(() => getPayment(other.api, midRail.id), (p) => p.status === 'SUCCEEDED', 20_000);
    expect(done.status).toBe('SUCCEEDED');
    const delivered = await waitFor(
      () => deliveries(other.api, endpoint.id),
      (list) => list.some((d) => d.event_type === 'payment.succeeded' && d.state === 'DELIVERED'),
      20_000,
    );
    expect(delivered.filter((d) => d.event_type === 'payment.succeeded')).toHaveLength(1);
    expect((await getPayment(other.api, waiting.id)).status).toBe('PENDING');
    expect((await other.api.get('/sandbox/clock')).body.offset_seconds).toBeGreaterThanOrEqual(30);
    expect((await accountEvents(other.api)).map((e: { type: string }) => e.type)).toEqual(
      expect.arrayContaining(['payment.created', 'payment.succeeded']),
    );
    // The first account starts from nothing.
    expect((await account.api.get('/payment_intents')).body.data).toEqual([]);
  });

  it('refuses restricted and publishable keys, and requests without a key', async () => {
    const { api } = account;
    const restricted = (await api.post('/api_keys', { name: 'ops', permissions: ['sandbox:write', 'payment_intents:write'] })).body.secret;
    const payment = await createPayment(api, referenceBody());
    expectError(await api.withKey(restricted).post('/sandbox/reset'), 403, 'permission_denied');
    expectError(await api.withKey(account.pk).post('/sandbox/reset'), 403, 'permission_denied');
    expectError(await api.withKey(null).post('/sandbox/reset'), 401, 'authentication_failed');
    expectError(await api.post('/sandbox/reset', { everything: true }), 400, 'invalid_request');
    // Nothing was deleted.
    expect((await getPayment(api, payment.id)).id).toBe(payment.id);
  });
});
