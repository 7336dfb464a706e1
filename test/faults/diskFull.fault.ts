import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, idempotencyKey, type TestAccount } from '../support/accounts';
import { freePort, spawnEngine, spawnGateway, type EngineProcess, type GatewayProcess } from '../support/processes';
import { startReceiver, type Receiver } from '../support/receiver';
import { expressBody } from '../support/payments';
import { createEndpoint } from '../support/webhooks';
import { fillDisk, mountTmpfs, unmount } from '../../packages/embedded-mongo/test/tmpfs';
import { sleep, waitFor } from './support/fixtures';

/**
 * The embedded engine's disk filled under a running gateway (a small tmpfs and a filler file), with
 * payments being created all along: every POST the engine cannot journal answers 503
 * `service_unavailable` with Retry-After within 5 s (never a 500), reads and GraphQL queries keep
 * answering 200, /readyz is 503; once the filler is removed the same processes accept writes again
 * within 5 s, a refused POST retried with its key creates exactly one payment, and what was under way
 * (an express payment's +5 s step, its webhook) carries on. A restart then finds every payment that
 * was answered 201, and none that was answered 503.
 */
const ANSWER_WITHIN_MS = 5_000;
const CREATE_BODY = { amount: 5_000, currency: 'AOA', payment_method: 'multicaixa_reference' };

const mountPoint = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-disk-full-'));
const whyNot = mountTmpfs(mountPoint, '48m');
if (whyNot) console.warn(`\n!!! SKIPPED: the disk-full fault test needs a small tmpfs it can fill (${whyNot})\n`);

describe.skipIf(whyNot !== undefined)('the embedded engine’s disk fills up and empties again', () => {
  const dataDir = path.join(mountPoint, 'data');
  const filler = path.join(mountPoint, 'filler');
  let port: number;
  let engine: EngineProcess;
  let gateway: GatewayProcess;
  let account: TestAccount;
  let receiver: Receiver;

  const startEngine = () => spawnEngine({ DATA_DIR: dataDir, DB_PORT: String(port) });

  beforeAll(async () => {
    port = await freePort();
    engine = await startEngine();
    receiver = await startReceiver();
    gateway = await spawnGateway(engine.uri, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    account = await createAccount(gateway.url, 'disk full');
    await createEndpoint(account.api, `${receiver.url}/hooks`);
  });

  afterAll(async () => {
    await gateway?.stop();
    await engine?.stop();
    await receiver?.close();
    unmount(mountPoint);
  });

  async function timed<T>(call: () => Promise<T>): Promise<{ value: T; ms: number }> {
    const started = performance.now();
    const value = await call();
    return { value, ms: performance.now() - started };
  }

  it('refuses writes with 503 while full, keeps serving reads, and accepts writes once space is back', async () => {
    // Payments created all along, ten a second: each answer is kept with its key.
    const answers: Array<{ key: string; status: number; code?: string; id?: string }> = [];
    let loading = true;
    const load = (async () => {
      while (loading) {
        const key = idempotencyKey();
        const res = await account.api.post('/payment_intents', CREATE_BODY, { idempotencyKey: key });
        answers.push({ key, status: res.status, code: res.body?.error?.code, id: res.body?.id });
        await sleep(100);
      }
    })();

    // An express payment succeeds at +5 s: that step falls while the disk is full.
    const before = await account.api.post('/payment_intents', expressBody(), { idempotencyKey: idempotencyKey() });
    expect(before.status).toBe(201);

    expect(fillDisk(filler)).toBe('ENOSPC');
    const fullAt = performance.now();
    // Refused: small writes may still fit in what is left of the journal's last page for a moment.
    let key = idempotencyKey();
    const post = await waitFor(
      async () => {
        key = idempotencyKey();
        const r = await timed(() => account.api.post('/payment_intents', CREATE_BODY, { idempotencyKey: key }));
        if (r.value.status === 201) answers.push({ key, status: 201, id: r.value.body.id });
        return r;
      },
      (r) => r.value.status !== 201,
      10_000,
    );
    expect(post.value.status).toBe(503);
    expect(post.value.body.error.code).toBe('service_unavailable');
    expect(Number(post.value.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(post.ms).toBeLessThan(ANSWER_WITHIN_MS);

    const get = await timed(() => account.api.get(`/payment_intents/${before.body.id}`));
    expect(get.value.status).toBe(200);
    expect(get.ms).toBeLessThan(ANSWER_WITHIN_MS);
    const gql = await fetch(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.sk}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'query($id: ID!) { paymentIntent(id: $id) { id } }', variables: { id: before.body.id } }),
    });
    expect(((await gql.json()) as { data?: { paymentIntent?: { id: string } } }).data?.paymentIntent?.id).toBe(before.body.id);
    const ready = await timed(() => fetch(`${gateway.url}/readyz`));
    expect(ready.value.status).toBe(503);
    expect(ready.ms).toBeLessThan(ANSWER_WITHIN_MS);

    // Full for six seconds in all, with the load going on, then space again.
    await sleep(Math.max(0, 6_000 - (performance.now() - fullAt)));
    fs.rmSync(filler);
    const freedAt = performance.now();
    const retried = await waitFor(
      () => account.api.post('/payment_intents', CREATE_BODY, { idempotencyKey: key }),
      (r) => r.status === 201,
      ANSWER_WITHIN_MS,
    );
    console.log(`disk full: writes accepted again ${Math.round(performance.now() - freedAt)} ms after space was freed`);
    const again = await account.api.post('/payment_intents', CREATE_BODY, { idempotencyKey: key });
    expect([again.body.id, again.headers.get('idempotency-replayed')]).toEqual([retried.body.id, 'true']);
    await waitFor(async () => (await fetch(`${gateway.url}/readyz`)).status, (status) => status === 200, ANSWER_WITHIN_MS);

    loading = false;
    await load;
    // Every answer under load was a payment or an honest 503, never a 500.
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.filter((a) => a.status !== 503 || a.code !== 'service_unavailable')).toEqual([]);
    expect(answers.filter((a) => a.status === 201).length).toBeGreaterThan(0);

    // What was under way carried on: the express payment succeeded and its webhook came once.
    await waitFor(async () => (await account.api.get(`/payment_intents/${before.body.id}`)).body.status, (s) => s === 'SUCCEEDED', 30_000);
    const succeeded = (r: { rawBody: string }) => r.rawBody.includes(before.body.id) && r.rawBody.includes('"payment.succeeded"');
    await receiver.waitFor(succeeded, 1, 30_000);
    await sleep(2_000);
    expect(receiver.received.filter(succeeded)).toHaveLength(1);

    // A restart finds exactly what was acknowledged: every 201, and no payment for a key answered 503.
    await gateway.stop();
    await engine.stop();
    engine = await startEngine();
    gateway = await spawnGateway(engine.uri, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }, { port: gateway.port });
    for (const a of answers.filter((x) => x.status === 201)) {
      expect((await account.api.get(`/payment_intents/${a.id}`)).status, a.id).toBe(200);
    }
    const list = await account.api.get('/payment_intents?limit=100');
    const stored = list.body.data.length as number;
    // The load's 201s, the express payment and the retried key's one payment; nothing for a refused key.
    expect(stored).toBe(Math.min(100, answers.filter((a) => a.status === 201).length + 2));
  });
});
