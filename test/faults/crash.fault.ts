import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import { spawnEngine, spawnGateway, type EngineProcess, type GatewayProcess } from '../support/processes';
import { startReceiver, type Receiver } from '../support/receiver';
import { ok, refuseSomeFirstAttempts, sleep } from './support/fixtures';
import { badSignatures, checkInvariants, diagnoseOpenPayments, readState, waitForDeliveries, type AccountState } from './support/invariants';
import { PaymentsLoad, type LoadAccount } from './support/load';
import { Prng, seedFromEnv } from './support/prng';

/**
 * Crash: a standalone database process, a gateway process (`src/main.ts`) under a payments workload
 * (express payments of every sandbox scenario, references paid or cancelled or left to expire,
 * refunds, concurrent duplicate creates, webhooks to a local receiver that fails some first
 * attempts) is SIGKILLed at random moments three times and restarted on the same port. Then the
 * sandbox clock drives the remaining timers (1 h, then 80 h) and the webhook backlog drains.
 * Nothing may be lost or done twice. Replay a run with CRASH_SEED=<seed>; CRASH_KILLS and
 * CRASH_UP_MS=<min>-<max> (up-time before each kill) make it harsher.
 */
const SEED = seedFromEnv('CRASH_SEED');
const KILLS = Number(process.env.CRASH_KILLS ?? 3);
/** Up-time before each kill, drawn in [min, max] ms (CRASH_UP_MS=min-max). */
const [UP_MIN, UP_MAX] = (process.env.CRASH_UP_MS ?? '4000-9000').split('-').map(Number) as [number, number];
// As `npm start` runs it: the timers in the gateway's background thread, killed with the process.
// Load from one account to one host past the default outgoing caps would make delivery wait for the
// budget; this test is about crashes (test/faults/outgoingTraffic.fault.ts holds the caps).
const UNCAPPED = { WEBHOOK_MAX_REQUESTS_PER_ACCOUNT_PER_MINUTE: '1000000', WEBHOOK_MAX_REQUESTS_PER_HOST_PER_MINUTE: '1000000' };
const GATEWAY_ENV = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', BACKGROUND_THREAD: 'true', ...UNCAPPED };

let engine: EngineProcess;
let gateway: GatewayProcess;
let receiver: Receiver;
const accounts: LoadAccount[] = [];
const secrets: Record<string, string> = {};
let load: PaymentsLoad;
let states: AccountState[] = [];
let missingDeliveries: string[] = [];
let kills = 0;
let diagnosis = '';
const startedAt = Date.now();

beforeAll(async () => {
  const rng = new Prng(SEED, 0);
  console.log(`crash: seed ${SEED} (replay with CRASH_SEED=${SEED})`);
  engine = await spawnEngine();
  receiver = await startReceiver();
  // Some first attempts fail, so retries (durable timers) are part of what must survive the crashes.
  refuseSomeFirstAttempts(receiver);
  gateway = await spawnGateway(engine.uri, GATEWAY_ENV);
  for (const name of ['a', 'b']) {
    const acct = await createAccount(gateway.url, `crash ${name}`);
    const endpoint = await ok(acct.api.post('/webhook_endpoints', { url: `${receiver.url}/${name}` }), 201, 'endpoint');
    secrets[`/${name}`] = endpoint.secret;
    accounts.push({ id: acct.id, sk: acct.sk });
  }

  load = new PaymentsLoad(() => [gateway.url], accounts, new Prng(SEED, 1), `crash${SEED}`);
  load.start(8);
  // The up-times, down-times and the last stretch of load are the workload under test (kills at random
  // moments), not waits for something.
  for (let i = 0; i < KILLS; i++) {
    await sleep(rng.int(UP_MIN, UP_MAX));
    await gateway.kill();
    kills++;
    await sleep(rng.int(0, 1_000));
    gateway = await spawnGateway(engine.uri, GATEWAY_ENV, { port: gateway.port });
  }
  await sleep(3_000);
  await load.stop();

  // Remaining timers (rail steps, refunds, webhook retries, reference expiry) through the sandbox clock.
  for (const acct of accounts) {
    for (const seconds of [3_600, 80 * 3_600]) {
      const res = await load.call('POST', '/sandbox/clock/advance', acct.sk, { seconds });
      if (res.status !== 200) throw new Error(`advance: ${res.status} ${JSON.stringify(res.body)}`);
    }
  }
  // Express payments of scenario 923000002 settle 30 s after creation, in real time as well.
  const deadline = Date.now() + 60_000;
  for (;;) {
    states = await Promise.all(accounts.map((acct) => readState(gateway.url, acct, load.creates)));
    const open = states.flatMap((s) => s.payments).filter((p) => ['PENDING', 'PROCESSING', 'UNKNOWN'].includes(p.status));
    if (open.length === 0 || Date.now() > deadline) break;
    await sleep(1_000);
  }
  missingDeliveries = await waitForDeliveries(receiver, states.flatMap((s) => s.events.map((e) => e.id)), 90_000);
  states = await Promise.all(accounts.map((acct) => readState(gateway.url, acct, load.creates)));
  diagnosis = await diagnoseOpenPayments(engine.uri, states);
}, 400_000);

afterAll(async () => {
  const payments = states.flatMap((s) => s.payments);
  const events = states.flatMap((s) => s.events);
  const byStatus = new Map<string, number>();
  for (const p of payments) byStatus.set(p.status, (byStatus.get(p.status) ?? 0) + 1);
  console.log(
    [
      `crash summary: seed ${SEED}; ${kills} SIGKILLs; ${((Date.now() - startedAt) / 1000).toFixed(0)} s`,
      `  requests ${load?.stats.requests} (no answer ${load?.stats.noAnswer}, 5xx ${load?.stats.fiveXx}, answered after a retry ${load?.stats.retried}, replays ${load?.stats.replays})`,
      `  payments ${payments.length} (${[...byStatus].map(([k, n]) => `${k} ${n}`).join(', ')}); refunds ${states.reduce((n, s) => n + s.refunds.length, 0)}; events ${events.length}`,
      `  webhook requests received ${receiver?.received.length} for ${new Set(receiver?.received.map((r) => r.headers['service-event-id'])).size} distinct events; missing ${missingDeliveries.length}`,
      ...(load?.stats.fiveXxSamples.length ? [`  5xx samples: ${load.stats.fiveXxSamples.join(' | ')}`] : []),
    ].join('\n'),
  );
  await gateway?.stop();
  await receiver?.close();
  await engine?.stop();
});

describe(`crash: SIGKILL ×${KILLS} under load (seed ${SEED})`, () => {
  it('ran a real workload across the crashes', () => {
    expect(kills).toBe(KILLS);
    const payments = states.flatMap((s) => s.payments);
    expect(payments.length).toBeGreaterThan(40);
    expect(new Set(payments.map((p) => p.status)).size).toBeGreaterThanOrEqual(4);
    expect(states.reduce((n, s) => n + s.refunds.length, 0)).toBeGreaterThan(0);
    expect(load.stats.noAnswer, 'the kills interrupted requests in flight').toBeGreaterThan(0);
  });

  it('every payment is final; events match states; refunds never exceed payments; one object per idempotency key', () => {
    expect(checkInvariants(states, load.creates), diagnosis).toEqual([]);
  });

  it('the receiver got every event at least once, each signed with its endpoint\'s secret', () => {
    expect(missingDeliveries).toEqual([]);
    expect(badSignatures(receiver, secrets)).toEqual([]);
  });

  it('creates re-sent with their keys after the crashes replay the same object', async () => {
    const answered = load.creates.filter((c) => c.id);
    const rng = new Prng(SEED, 2);
    const sample = Array.from({ length: Math.min(30, answered.length) }, () => rng.pick(answered));
    for (const c of sample) {
      const res = await load.call('POST', c.kind === 'payment' ? '/payment_intents' : '/refunds', c.account.sk, c.body, c.key);
      expect(res.status, `${c.key}: ${JSON.stringify(res.body)}`).toBe(201);
      expect(res.body.id).toBe(c.id);
      expect(res.headers.get('idempotency-replayed')).toBe('true');
    }
  });
});
