import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createAccount, idempotencyKey, type TestAccount } from '../support/accounts';
import { freePort, spawnEngine, spawnGateway, type EngineProcess, type GatewayProcess } from '../support/processes';
import { startReceiver, type Receiver } from '../support/receiver';
import { expressBody } from '../support/payments';
import { createEndpoint } from '../support/webhooks';
import { openSse } from '../streams/support/sseClient';
import { sleep, timed, waitFor } from './support/fixtures';

/**
 * The database process killed under a running gateway (a MongoDB outage, as a gateway on MONGODB_URI
 * meets it), then started again on the same address and data directory: while it is away every /v1
 * call answers within 5 s with 503 `service_unavailable` and Retry-After (GraphQL with the same code),
 * /readyz is 503; once it is back the same gateway process serves again, and a POST answered 503 and
 * retried with its Idempotency-Key creates exactly one payment. What was under way carries on: an
 * express payment whose +5 s step fell in the outage succeeds, its webhook arrives once, and a stream
 * opened before the outage delivers the change. Twice: an outage shorter than the driver's timeouts
 * (3 s) and one longer than all of them (45 s).
 */
const ANSWER_WITHIN_MS = 5_000;
/** Longer than any answer (or wait below) may take here: a call still unanswered then is a hang, reported as one. */
const HANG_MS = 40_000;
const CREATE_BODY = { amount: 5_000, currency: 'AOA', payment_method: 'multicaixa_reference' };

let dataDir: string;
let port: number;
let engine: EngineProcess;
let gateway: GatewayProcess;
let account: TestAccount;
let receiver: Receiver;

const startEngine = () => spawnEngine({ DATA_DIR: dataDir, DB_PORT: String(port) });

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'pgw-outage-'));
  port = await freePort();
  engine = await step('engine restart', () => startEngine());
  receiver = await startReceiver();
  gateway = await spawnGateway(engine.uri, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  account = await createAccount(gateway.url, 'database outage');
  await createEndpoint(account.api, `${receiver.url}/hooks`);
});

afterAll(async () => {
  await gateway?.stop();
  await engine?.stop();
  await receiver?.close();
  await rm(dataDir, { recursive: true, force: true });
});

/**
 * `call`, aborted after HANG_MS: a request the gateway never answers fails the test within seconds,
 * naming the step and showing what the gateway and the engine printed, instead of holding the file
 * until vitest's timeout with nothing to read.
 */
async function step<T>(name: string, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const signal = AbortSignal.timeout(HANG_MS);
  // Raced as well as passed on: a call that does not take the signal is bounded too.
  const hung = new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new Error(`no answer within ${HANG_MS} ms`)), { once: true }));
  try {
    return await Promise.race([call(signal), hung]);
  } catch (err) {
    throw new Error(
      `${name}: ${String(err)}\n--- gateway output (end) ---\n${gateway.output().slice(-6_000)}\n--- engine output (end) ---\n${engine.output().slice(-3_000)}`,
    );
  }
}

async function graphql(query: string, variables: Record<string, unknown>, signal: AbortSignal) {
  const res = await fetch(`${gateway.url}/graphql`, {
    signal,
    method: 'POST',
    headers: { authorization: `Bearer ${account.sk}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as any };
}

describe.each([
  ['shorter than the driver timeouts', 3_000],
  ['longer than every driver timeout', 45_000],
])('database away for an outage %s (%i ms)', (_what, outageMs) => {
  it('answers 503 service_unavailable fast while it is away, then serves again; a retried POST creates one payment', async () => {
    // An express payment succeeds at +5 s: that step falls in the outage.
    const before = await step('create before the outage', (signal) => account.api.post('/payment_intents', expressBody(), { idempotencyKey: idempotencyKey(), signal }));
    expect(before.status).toBe(201);
    const stream = await step('open the stream', () => openSse(`${gateway.url}/v1/payment_intents/${before.body.id}/events`, { authorization: `Bearer ${account.sk}` }));
    expect(stream.status).toBe(200);
    onTestFinished(() => stream.close());

    await step('kill the engine', () => engine.kill());
    const downAt = Date.now();
    const key = idempotencyKey();

    const post = await timed(() => step('POST during the outage', (signal) => account.api.post('/payment_intents', CREATE_BODY, { idempotencyKey: key, signal })));
    expect(post.value.status).toBe(503);
    expect(post.value.body.error.code).toBe('service_unavailable');
    expect(Number(post.value.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(post.ms).toBeLessThan(ANSWER_WITHIN_MS);

    const get = await timed(() => step('GET during the outage', (signal) => account.api.get(`/payment_intents/${before.body.id}`, { signal })));
    expect(get.value.status).toBe(503);
    expect(get.value.body.error.code).toBe('service_unavailable');
    expect(get.ms).toBeLessThan(ANSWER_WITHIN_MS);

    const gql = await timed(() => step('GraphQL during the outage', (signal) => graphql('query($id: ID!) { paymentIntent(id: $id) { id status } }', { id: before.body.id }, signal)));
    expect(gql.value.body.errors?.[0]?.extensions?.code).toBe('service_unavailable');
    expect(gql.ms).toBeLessThan(ANSWER_WITHIN_MS);

    const ready = await timed(() => step('/readyz during the outage', (signal) => fetch(`${gateway.url}/readyz`, { signal })));
    expect(ready.value.status).toBe(503);
    expect(ready.ms).toBeLessThan(ANSWER_WITHIN_MS);

    // The rest of the outage, then the database again on the same address and data.
    await sleep(Math.max(0, outageMs - (Date.now() - downAt)));
    // Still refused, and still fast, at the end of a long outage.
    const late = await timed(() => step('GET at the end of the outage', (signal) => account.api.get(`/payment_intents/${before.body.id}`, { signal })));
    expect(late.value.status).toBe(503);
    expect(late.ms).toBeLessThan(ANSWER_WITHIN_MS);
    engine = await step('engine restart', () => startEngine());

    const backAt = Date.now();
    await step('ready again after the restart', () => waitFor(async () => (await fetch(`${gateway.url}/readyz`, { signal: AbortSignal.timeout(5_000) })).status, (status) => status === 200, 30_000));
    console.log(`database outage ${outageMs} ms: ready again ${Date.now() - backAt} ms after the database restarted`);
    const read = await step('GET after the restart', (signal) => account.api.get(`/payment_intents/${before.body.id}`, { signal }));
    expect(read.status).toBe(200);

    const retried = await step('retried POST', (signal) => account.api.post('/payment_intents', CREATE_BODY, { idempotencyKey: key, signal }));
    expect(retried.status).toBe(201);
    const again = await step('replayed POST', (signal) => account.api.post('/payment_intents', CREATE_BODY, { idempotencyKey: key, signal }));
    expect(again.body.id).toBe(retried.body.id);
    // Nothing else was made by the refused POST: the newest payments are the retry and the one before the outage.
    const list = await step('list after the restart', (signal) => account.api.get('/payment_intents?limit=100', { signal }));
    const ids = list.body.data.map((p: { id: string }) => p.id);
    expect(ids.filter((id: string) => id === retried.body.id)).toHaveLength(1);
    expect(ids.indexOf(retried.body.id)).toBe(0);
    expect(ids[1]).toBe(before.body.id);

    // What was under way when the database went away carried on once it was back.
    await waitFor(async () => (await step('GET until it succeeds', (signal) => account.api.get(`/payment_intents/${before.body.id}`, { signal }))).body.status, (status) => status === 'SUCCEEDED', 30_000);
    const succeeded = (r: { rawBody: string }) => r.rawBody.includes(before.body.id) && r.rawBody.includes('"payment.succeeded"');
    await receiver.waitFor(succeeded, 1, 30_000);
    // The same stream, opened before the outage, carries the change (then ends: the status is final).
    await stream.waitFor((messages) => messages.some((m) => m.data.includes('SUCCEEDED')), 30_000);
    // Once: no doubled webhook after the retries of the outage (a little while for a straggler).
    await sleep(2_000);
    expect(receiver.received.filter(succeeded)).toHaveLength(1);
  });
});
