import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_CAPS } from '../../src/domain/accountCaps';
import { ATTEMPT_LIMITS, attemptStats } from '../../src/domain/webhooks/deliveryEngine';
import { WebhookDeliveryModel } from '../../src/domain/webhooks/webhookDeliveryModel';
import { ATTEMPT_TIMEOUT_MS } from '../../src/domain/webhooks/webhookHttp';
import { createAccount, type TestAccount } from '../support/accounts';
import { startTestServer, type TestServer } from '../support/server';
import { startHangingReceiver, type HangingReceiver } from './support/hangingReceiver';
import { startReceiver, type Receiver } from '../support/receiver';
import { createEndpoint, createPayment, deliveries, expressBody, referenceBody, waitFor } from './support/webhooks';

/**
 * Issue 16, item 3: one account whose receivers hang must not hold the sockets, nor the turn, of every
 * other account; a receiver that never finishes holds no socket after the attempt's deadline.
 */
let server: TestServer;
let receiver: Receiver;
const hanging: HangingReceiver[] = [];

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_PER_MINUTE: '100000' });
  receiver = await startReceiver();
});
afterEach(async () => {
  for (const h of hanging.splice(0)) await h.close();
});
afterAll(async () => {
  await server?.stop();
  await receiver?.close();
});

async function hangingReceiver(kind: 'silent' | 'stalling' | 'gated'): Promise<HangingReceiver> {
  const h = await startHangingReceiver(kind);
  hanging.push(h);
  return h;
}

/** An account with the most endpoints it may have, all pointing at `url` (made at once: their order does not matter). */
async function hogWithEndpoints(url: string): Promise<TestAccount & { endpointIds: string[] }> {
  const hog = await createAccount(server.baseUrl);
  const endpoints = await Promise.all(Array.from({ length: ACCOUNT_CAPS.webhookEndpoints }, (_, i) => createEndpoint(hog.api, `${url}?n=${i}`)));
  return { ...hog, endpointIds: endpoints.map((e) => e.id) };
}

/** `count` payments of `account` with this body, created at once: each one's events go to every endpoint. */
async function createPaymentsAtOnce(account: TestAccount, count: number, body: Record<string, unknown>): Promise<void> {
  await Promise.all(Array.from({ length: count }, () => createPayment(account.api, body)));
}

/** Sends a test ping to a fresh endpoint of `account` on the good receiver; resolves with the arrival. */
async function pingThrough(account: TestAccount, name: string): Promise<{ sentAt: number; arrivedAt: number }> {
  const endpoint = await createEndpoint(account.api, `${receiver.url}/fair/${name}`);
  const sentAt = Date.now();
  const ping = await account.api.post(`/webhook_endpoints/${endpoint.id}/test`, {});
  expect(ping.status, ping.text).toBe(202);
  const [arrived] = await receiver.waitFor((r) => r.headers['service-event-id'] === ping.body.event_id, 1, 60_000);
  return { sentAt, arrivedAt: arrived!.at };
}

describe('fair webhook delivery', () => {
  it("an account whose endpoints hang does not delay another account's deliveries", async () => {
    const baseline = await pingThrough(await createAccount(server.baseUrl), 'baseline');

    // 16 endpoints that accept the connection and never answer; each payment event goes to all of
    // them: 14 payments give 224 first attempts, 3.5 times the 64 sockets in all.
    const silent = await hangingReceiver('silent');
    const hog = await hogWithEndpoints(silent.url);
    await createPaymentsAtOnce(hog, 14, expressBody());
    await silent.waitOpened(ATTEMPT_LIMITS.perAccount);

    const other = await createAccount(server.baseUrl);
    const closedBefore = silent.closed;
    const { sentAt, arrivedAt } = await pingThrough(other, 'other');
    // The bound: before any of the hanging attempts reached its deadline (the first of them ends
    // ATTEMPT_TIMEOUT_MS after it started, which was before this ping was sent). First come, first
    // served, the ping would have waited for several rounds of 5 s deadlines.
    const closedAtArrival = silent.closed;
    expect(closedAtArrival - closedBefore, `other account's ping took ${arrivedAt - sentAt} ms (baseline ${baseline.arrivedAt - baseline.sentAt} ms) while ${silent.opened} hanging connections were opened`).toBe(0);
    // The hog never held more than its share of sockets.
    expect(silent.opened - silent.closed).toBeLessThanOrEqual(ATTEMPT_LIMITS.perAccount);
  }, 90_000);

  describe('a receiver that never finishes', () => {
    /** One test ping to a receiver of `kind`; resolves once the receiver saw the gateway close the socket. */
    async function pingUntilClosed(kind: 'silent' | 'stalling'): Promise<{ h: HangingReceiver; delivery: any }> {
      const h = await startHangingReceiver(kind);
      receivers.push(h);
      const { api } = await createAccount(server.baseUrl);
      const endpoint = await createEndpoint(api, h.url);
      expect((await api.post(`/webhook_endpoints/${endpoint.id}/test`, {})).status).toBe(202);
      await h.waitOpened(1);
      // Seen from the receiver: the gateway closes the connection (it is not kept in the keep-alive pool).
      await h.waitClosed(1, 3 * ATTEMPT_TIMEOUT_MS);
      const [delivery] = await waitFor(() => deliveries(api, endpoint.id), (list) => list[0]?.attempts === 1);
      return { h, delivery };
    }

    // Both pings start at once, so that their deadlines (ATTEMPT_TIMEOUT_MS of real time each, which is
    // what these tests prove) run together rather than one after the other. Their receivers are kept
    // out of `hanging` (closed after each test) and closed once both tests are done.
    const receivers: HangingReceiver[] = [];
    let stalling: ReturnType<typeof pingUntilClosed>;
    let silent: ReturnType<typeof pingUntilClosed>;
    beforeAll(() => {
      stalling = pingUntilClosed('stalling');
      silent = pingUntilClosed('silent');
      // Each test awaits its own: a failure of the other one's must not surface before then, unhandled.
      for (const ping of [stalling, silent]) ping.catch(() => undefined);
    });
    afterAll(async () => {
      await Promise.all([stalling, silent].map((ping) => ping.catch(() => undefined)));
      for (const h of receivers.splice(0)) await h.close();
    });

    it('a receiver that sends a 200 and never ends the body loses its socket at the deadline; the attempt counts as delivered', async () => {
      const { h, delivery } = await stalling;
      // The status line came within the deadline: "2xx within 5 s" holds.
      expect(delivery).toMatchObject({ state: 'DELIVERED', last_status: 200, attempts: 1 });
      expect(h.opened - h.closed).toBe(0);
    }, 60_000);

    it('a receiver that accepts and never answers loses its socket at the deadline; the attempt failed', async () => {
      const { delivery } = await silent;
      expect(delivery).toMatchObject({ state: 'RETRYING', last_status: 0, attempts: 1 });
    }, 60_000);
  });

  it('deliveries beyond the in-memory backlog wait in the database and are each sent once', async () => {
    const gated = await hangingReceiver('gated');
    const hog = await hogWithEndpoints(gated.url);
    // 20 payments x 16 endpoints: 320 first attempts of payment.created, more than the 256 an account
    // may have waiting in memory (8 more are in flight at the gate). Reference payments stay PENDING, so
    // that is all there is to drain: express ones would bring 320 more with payment.succeeded at +5 s,
    // which the drain below could count or not depending on when it finished.
    await createPaymentsAtOnce(hog, 20, referenceBody());
    await gated.waitOpened(ATTEMPT_LIMITS.perAccount);
    const ofHog = { endpoint_id: { $in: hog.endpointIds } }; // by endpoint: indexed (the plan test checks tests' queries too)
    const created = await WebhookDeliveryModel.countDocuments(ofHog);
    expect(created).toBeGreaterThan(ATTEMPT_LIMITS.backlogPerAccount + ATTEMPT_LIMITS.perAccount);
    // What did not fit was left in the database (memory holds at most the account's backlog; other
    // tests' accounts may still have attempts waiting, so the account's own count is what is bounded).
    const stats = attemptStats(server.gateway.runtime.deliveries, hog.id);
    expect(stats.spillingAccounts).toContain(hog.id);
    expect(stats.queuedForAccount).toBeGreaterThan(0);
    expect(stats.queuedForAccount).toBeLessThanOrEqual(ATTEMPT_LIMITS.backlogPerAccount);
    expect(stats.queued).toBeLessThanOrEqual(ATTEMPT_LIMITS.backlogTotal);
    gated.open();
    const total = await waitFor(
      async () => ({
        all: await WebhookDeliveryModel.countDocuments(ofHog),
        delivered: await WebhookDeliveryModel.countDocuments({ ...ofHog, state: 'DELIVERED' }),
      }),
      (c) => c.all > 0 && c.delivered === c.all && gated.requests === c.all,
      120_000,
      250,
    );
    // Never dropped nor doubled: one attempt per delivery, and each (event, endpoint) got one request.
    expect(await WebhookDeliveryModel.countDocuments({ ...ofHog, attempts: { $ne: 1 } })).toBe(0);
    expect(gated.perDelivery.size).toBe(total.all);
    expect(Math.max(...gated.perDelivery.values())).toBe(1);
  }, 180_000);
});
