import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import { spawnEngine, spawnGateway, type EngineProcess, type GatewayProcess } from '../support/processes';
import { startReceiver, type Receiver } from '../support/receiver';
import { ok, refuseSomeFirstAttempts, sleep } from './support/fixtures';
import { badSignatures, checkInvariants, diagnoseOpenPayments, readState, waitForDeliveries, type AccountState } from './support/invariants';
import { PaymentsLoad, type LoadAccount } from './support/load';
import { Prng, seedFromEnv } from './support/prng';

/**
 * Two gateway processes (`src/main.ts`) on one standalone database under the crash suite's workload,
 * requests alternating between them: the same invariants hold, every durable timer fired exactly
 * once, and with no crash every webhook attempt happened once (one delivery per event and endpoint,
 * plus one retry where the receiver refused the first attempt). Replay with TWO_PROCESS_SEED=<seed>.
 */
const SEED = seedFromEnv('TWO_PROCESS_SEED');
const LOAD_MS = 20_000;
const GATEWAY_ENV = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };

let engine: EngineProcess;
let gateways: GatewayProcess[] = [];
let receiver: Receiver;
const accounts: LoadAccount[] = [];
const secrets: Record<string, string> = {};
/** Events whose first delivery attempt the receiver refused. */
const refusedFirst = new Set<string>();
let load: PaymentsLoad;
let states: AccountState[] = [];
let missingDeliveries: string[] = [];
let timers: any[] = [];
let diagnosis = '';
const startedAt = Date.now();

beforeAll(async () => {
  console.log(`two processes: seed ${SEED} (replay with TWO_PROCESS_SEED=${SEED})`);
  engine = await spawnEngine();
  receiver = await startReceiver();
  refuseSomeFirstAttempts(receiver, refusedFirst);
  gateways = await Promise.all([spawnGateway(engine.uri, GATEWAY_ENV), spawnGateway(engine.uri, GATEWAY_ENV)]);
  for (const [i, name] of ['a', 'b'].entries()) {
    const acct = await createAccount(gateways[i]!.url, `two-process ${name}`);
    const endpoint = await ok(acct.api.post('/webhook_endpoints', { url: `${receiver.url}/${name}` }), 201, 'endpoint');
    secrets[`/${name}`] = endpoint.secret;
    accounts.push({ id: acct.id, sk: acct.sk });
  }

  load = new PaymentsLoad(() => gateways.map((g) => g.url), accounts, new Prng(SEED, 1), `two${SEED}`);
  load.start(8);
  // The workload's duration, not a wait for something.
  await sleep(LOAD_MS);
  await load.stop();

  // The remaining timers through the sandbox clock, each account's advance on a different process.
  for (const [i, acct] of accounts.entries()) {
    for (const seconds of [3_600, 80 * 3_600]) {
      const res = await fetch(`${gateways[i % 2]!.url}/v1/sandbox/clock/advance`, {
        method: 'POST',
        headers: { authorization: `Bearer ${acct.sk}`, 'content-type': 'application/json' },
        body: JSON.stringify({ seconds }),
      });
      if (res.status !== 200) throw new Error(`advance: ${res.status} ${await res.text()}`);
    }
  }
  const deadline = Date.now() + 60_000;
  for (;;) {
    states = await Promise.all(accounts.map((acct, i) => readState(gateways[i % 2]!.url, acct, load.creates)));
    const open = states.flatMap((s) => s.payments).filter((p) => ['PENDING', 'PROCESSING', 'UNKNOWN'].includes(p.status));
    if (open.length === 0 || Date.now() > deadline) break;
    await sleep(1_000);
  }
  missingDeliveries = await waitForDeliveries(receiver, states.flatMap((s) => s.events.map((e) => e.id)), 90_000);
  // Proves an absence (no late duplicate attempt): every event has arrived once, so there is nothing to
  // wait for but a duplicate that should not exist; 2 s covers an attempt started just before.
  await sleep(2_000);
  states = await Promise.all(accounts.map((acct) => readState(gateways[0]!.url, acct, load.creates)));
  diagnosis = await diagnoseOpenPayments(engine.uri, states);
  const conn = await mongoose.createConnection(engine.uri).asPromise();
  try {
    timers = await conn.collection('timers').find({ account_id: { $in: accounts.map((a) => a.id) } }).toArray();
  } finally {
    await conn.close();
  }
}, 400_000);

afterAll(async () => {
  const payments = states.flatMap((s) => s.payments);
  const byStatus = new Map<string, number>();
  for (const p of payments) byStatus.set(p.status, (byStatus.get(p.status) ?? 0) + 1);
  const firedBy = new Map<string, number>();
  for (const t of timers.filter((x) => x.state === 'done')) {
    const proc = String(t.fired_by).split(':').slice(0, 2).join(':');
    firedBy.set(proc, (firedBy.get(proc) ?? 0) + 1);
  }
  console.log(
    [
      `two-process summary: seed ${SEED}; ${((Date.now() - startedAt) / 1000).toFixed(0)} s`,
      `  requests ${load?.stats.requests} (5xx ${load?.stats.fiveXx}, replays ${load?.stats.replays})`,
      `  payments ${payments.length} (${[...byStatus].map(([k, n]) => `${k} ${n}`).join(', ')}); refunds ${states.reduce((n, s) => n + s.refunds.length, 0)}; events ${states.reduce((n, s) => n + s.events.length, 0)}`,
      `  timers ${timers.length}, fired by: ${[...firedBy].map(([k, n]) => `${k} ${n}`).join(', ')}`,
      `  webhook requests ${receiver?.received.length} (${refusedFirst.size} first attempts refused); missing ${missingDeliveries.length}`,
      ...(load?.stats.fiveXxSamples.length ? [`  5xx samples: ${load.stats.fiveXxSamples.join(' | ')}`] : []),
    ].join('\n'),
  );
  await Promise.all(gateways.map((g) => g.stop()));
  await receiver?.close();
  await engine?.stop();
});

describe(`two gateway processes on one database (seed ${SEED})`, () => {
  it('ran a real workload on both processes', () => {
    expect(states.flatMap((s) => s.payments).length).toBeGreaterThan(50);
    expect(load.stats.fiveXx).toBe(0);
    const procs = new Set(timers.filter((t) => t.state === 'done').map((t) => String(t.fired_by).split(':').slice(0, 2).join(':')));
    expect(procs.size, 'both processes fired timers').toBe(2);
  });

  it('every payment is final; exactly one event of each kind it should have; refunds within bounds; one object per key', () => {
    expect(checkInvariants(states, load.creates), diagnosis).toEqual([]);
  });

  it('every timer fired exactly once and none is left running or failed', () => {
    // A webhook retry that finds its account's attempts backed up (or its delivery already queued) is
    // deferred by design: it throws "fires again later" and runs once more. It counts as fired once when
    // its effect was once, which the receiver's test below checks.
    const deferred = (t: (typeof timers)[number]) => t.kind === 'webhook.retry' && /fires again later/.test(String(t.last_error ?? ''));
    const bad = timers.filter((t) => t.state === 'running' || t.state === 'failed' || (t.state === 'done' && t.attempts !== 1 && !deferred(t)));
    expect(bad.map((t) => `${t.kind} ${t.ref_id} ${t.state} attempts=${t.attempts} ${t.last_error ?? ''}`)).toEqual([]);
    expect(timers.filter((t) => t.state === 'done').length).toBeGreaterThan(50);
  });

  it('the receiver got every event, each attempt once: one delivery, plus one retry where the first was refused', () => {
    expect(missingDeliveries).toEqual([]);
    expect(badSignatures(receiver, secrets)).toEqual([]);
    const perEvent = new Map<string, number>();
    for (const r of receiver.received) {
      const id = String(r.headers['service-event-id']);
      perEvent.set(id, (perEvent.get(id) ?? 0) + 1);
    }
    const wrong = [...perEvent].filter(([id, n]) => n !== (refusedFirst.has(id) ? 2 : 1)).map(([id, n]) => `${id}: ${n} requests${refusedFirst.has(id) ? ' (first refused)' : ''}`);
    expect(wrong).toEqual([]);
  });
});
