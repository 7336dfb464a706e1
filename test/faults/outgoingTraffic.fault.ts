import { startEmbeddedMongo, type EmbeddedMongo } from '@pgw/embedded-mongo';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../support/accounts';
import { spawnGateway, type GatewayProcess } from '../support/processes';
import { startReceiver, type Receiver, type ReceivedRequest } from '../support/receiver';
import { advanceClock } from '../support/payments';
import { createEndpoint, deliveries } from '../support/webhooks';
import { waitFor } from '../support/wait';
import { ping, setChaos } from '../webhooks/support/chaos';

/**
 * Outgoing traffic to URLs a caller chooses is capped (issue 54, item 3; docs/webhooks.md, "Outgoing
 * traffic caps"). A gateway process with small caps (so that the bursts below pass them) sends to a real
 * receiver, which timestamps every POST; per target host, the count received by any moment never passes
 * what the cap lets go by then (half the cap at once, then half the cap per minute: the cap in any 60 s),
 * and every deferred request still arrives. Each scenario uses a host of its own (127.0.0.1, localhost,
 * retries.localhost: one receiver, three budget keys) and an account of its own.
 * - recover ×3 in a row: the second and third are refused (409); the first's attempts go within the cap;
 * - chaos with duplicate and both forged copies on 16 endpoints sharing one URL (4 requests a delivery);
 * - retries released by a clock advance go through the cap too.
 */
const HOST_CAP = 90;
const ACCOUNT_CAP = 120;
const ENV = {
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_MAX_REQUESTS_PER_HOST_PER_MINUTE: String(HOST_CAP),
  WEBHOOK_MAX_REQUESTS_PER_ACCOUNT_PER_MINUTE: String(ACCOUNT_CAP),
};

let engine: EmbeddedMongo;
let gateway: GatewayProcess;
let receiver: Receiver;
beforeAll(async () => {
  engine = await startEmbeddedMongo({ port: 0 });
  gateway = await spawnGateway(engine.uri, ENV);
  receiver = await startReceiver();
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
  await receiver?.close();
  await engine?.close();
}, 60_000);

const atPath = (path: string) => (r: ReceivedRequest) => r.path === path;

/**
 * Every request received on `path` from `since` on (a time taken before anything was asked of the
 * gateway) was let go within the host's budget: the n-th arrived no earlier than the bucket allowed n.
 */
function expectWithinCap(path: string, since: number, capPerMinute: number): number {
  const times = receiver.received.filter(atPath(path)).map((r) => r.at).sort((a, b) => a - b);
  times.forEach((t, i) => {
    const allowed = Math.floor(capPerMinute / 2 + ((capPerMinute / 2) * (t - since)) / 60_000);
    expect(i + 1, `request ${i + 1} on ${path} at +${t - since} ms: ${allowed} allowed by then`).toBeLessThanOrEqual(allowed);
  });
  // And never more than the cap in any 60 s window.
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= 60_000) j++;
    expect(i - j + 1).toBeLessThanOrEqual(capPerMinute);
  }
  return times.length;
}

async function newAccount(): Promise<TestAccount> {
  return createAccount(gateway.url);
}

describe('outgoing webhook traffic', () => {
  it('recover ×3 in a row: one runs, two are refused, and its re-sends stay within the host cap', async () => {
    const since = Date.now();
    const { api } = await newAccount();
    let failing = true;
    receiver.reply = (r) => ({ status: r.path === '/recover' && failing ? 500 : 200 });
    const endpoint = await createEndpoint(api, `http://127.0.0.1:${receiver.port}/recover`);
    const pings = 30;
    for (let i = 0; i < pings; i++) await ping(api, endpoint.id);
    await waitFor(() => deliveries(api, endpoint.id), (list) => list.length === pings && list.every((d) => d.state === 'RETRYING'), 60_000);

    failing = false;
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await api.post(`/webhook_endpoints/${endpoint.id}/recover`, { since: '2000-01-01T00:00:00.000Z' }));
    expect(answers.map((r) => r.status)).toEqual([202, 409, 409]);
    expect(answers[0]!.body.deliveries).toBe(pings);
    for (const refused of answers.slice(1)) expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    // 30 first attempts and 30 re-sends: 60 requests, over the 45 one host may take at once.
    await waitFor(() => deliveries(api, endpoint.id), (list) => list.every((d) => d.state === 'DELIVERED'), 120_000);
    const sent = expectWithinCap('/recover', since, HOST_CAP);
    expect(sent).toBeGreaterThanOrEqual(2 * pings);
  });

  it('chaos with duplicate and both forged copies on 16 endpoints of one URL: 4 requests a delivery, within the host cap', async () => {
    const since = Date.now();
    const { api } = await newAccount();
    receiver.reply = () => ({ status: 200 });
    const endpoints = [];
    for (let i = 0; i < 16; i++) {
      const endpoint = await createEndpoint(api, `http://localhost:${receiver.port}/chaos`);
      await setChaos(api, endpoint.id, { duplicate: 1, bad_signature: 1, stale_timestamp: 1, seed: i });
      endpoints.push(endpoint);
    }
    for (const endpoint of endpoints) await ping(api, endpoint.id);
    // 16 deliveries × (genuine + duplicate + 2 forged) = 64 requests, over the 45 at once: all arrive, in time.
    await receiver.waitFor(atPath('/chaos'), 64, 120_000);
    const sent = expectWithinCap('/chaos', since, HOST_CAP);
    expect(sent).toBe(64);
  });

  it('retries released by a clock advance wait for the budget too', async () => {
    const since = Date.now();
    const { api } = await newAccount();
    let failing = true;
    receiver.reply = (r) => ({ status: r.path === '/advance' && failing ? 500 : 200 });
    const endpoint = await createEndpoint(api, `http://retries.localhost:${receiver.port}/advance`);
    const pings = 40;
    for (let i = 0; i < pings; i++) await ping(api, endpoint.id);
    await waitFor(() => deliveries(api, endpoint.id), (list) => list.length === pings && list.every((d) => d.state === 'RETRYING'), 60_000);

    failing = false;
    // All 40 retries are due at once; the host's bucket has 5 left (plus what refilled).
    await advanceClock(api, 15);
    expectWithinCap('/advance', since, HOST_CAP);
    const list = await deliveries(api, endpoint.id);
    const sentSoFar = receiver.received.filter(atPath('/advance')).length;
    // What the budget held back is RETRYING still, with its one attempt: deferred, not failed.
    expect(list.reduce((n, d) => n + d.attempts, 0)).toBe(sentSoFar);
    expect(list.filter((d) => d.state === 'RETRYING').length).toBeGreaterThan(0);

    // They all go, as the budget refills (their timers fire again with backoff).
    await waitFor(() => deliveries(api, endpoint.id), (l) => l.every((d) => d.state === 'DELIVERED'), 180_000, 1_000);
    expect(expectWithinCap('/advance', since, HOST_CAP)).toBe(2 * pings);
  });
});
