import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { registerWebhookEndpoint, startMerchant, type Merchant } from '../../examples/merchant-express/merchant';
import { createClientAccount, useGateway } from '../../packages/client/test/support';
import { waitFor } from '../support/wait';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'merchant-chaos-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/**
 * `work`, failing after 20 s with the step's name: this test once hung to its 60 s timeout in a full run
 * without saying where (every wait below is bounded, but a request to the shop or the gateway was not).
 */
async function step<T>(name: string, work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${name}: no answer within 20 s`)), 20_000);
  });
  try {
    return await Promise.race([work(), hung]);
  } finally {
    clearTimeout(timer);
  }
}

async function json<T = any>(res: Response): Promise<T> {
  if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/**
 * The example shop with chaos `duplicate: 1, reorder: 0.5` on its endpoint (issue 42): every event
 * arrives twice and half are held back behind the next one. Paid, failed, expired and cancelled orders
 * each end in their state exactly once.
 */
describe('examples/merchant-express under chaos (duplicate: 1, reorder: 0.5)', () => {
  const gw = useGateway();
  let merchant: Merchant | undefined;
  afterAll(async () => merchant?.close());

  it('ends every order in the right state exactly once', async () => {
    const account = await createClientAccount(gw.server.baseUrl);
    const secrets: string[] = [];
    merchant = await startMerchant({ gatewayUrl: gw.server.baseUrl, apiKey: account.sk, webhookSecrets: secrets, dataDir });
    const endpoint = await registerWebhookEndpoint(gw.server.baseUrl, account.sk, merchant.url);
    secrets.push(endpoint.secret);
    const chaos = await account.client.PUT('/webhook_endpoints/{id}/chaos', { params: { path: { id: endpoint.id } }, body: { duplicate: 1, reorder: 0.5, seed: 4242 } });
    expect(chaos.data.enabled).toBe(true);

    const order = (body: Record<string, unknown>) =>
      step(`order ${JSON.stringify(body)}`, () => fetch(`${merchant!.url}/orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ amount: 5000, ...body }) }).then((r) =>
        json<{ order: string; payment_intent: string }>(r),
      ));
    const expected = new Map<string, string>();
    for (let i = 0; i < 2; i++) expected.set((await order({ mobile: '923000000' })).order, 'fulfilled');
    for (let i = 0; i < 2; i++) expected.set((await order({ mobile: '923000001' })).order, 'payment_failed');
    expected.set((await order({ method: 'reference' })).order, 'expired');
    const cancelled = await order({ mobile: '923000000' });
    expected.set(cancelled.order, 'cancelled');
    await step('cancel', () => account.client.POST('/payment_intents/{id}/cancel', { params: { path: { id: cancelled.payment_intent } } }));

    // The express payments finish at +5 s, the reference expires after 72 h: the sandbox clock, not a wait.
    await step('clock +10 s', () => account.client.POST('/sandbox/clock/advance', { body: { seconds: 10 } }));
    await step('clock +73 h', () => account.client.POST('/sandbox/clock/advance', { body: { seconds: 73 * 3600 } }));

    for (const [id, status] of expected) {
      await waitFor(
        () => step(`read order ${id}`, () => fetch(`${merchant!.url}/orders/${id}`).then((r) => json(r))),
        (o) => o.status === status,
      );
    }
    // Every event was sent twice (the duplicates all went out), yet each order ended once. An order can
    // reach its state from a duplicate while the genuine delivery is still held back: the report counts
    // that one as reordered once it is sent, so wait for it too.
    const report = await waitFor(
      async () => (await step('chaos report', () => account.client.GET('/webhook_endpoints/{id}/chaos', { params: { path: { id: endpoint.id } } }))).data.report,
      (r) => r.duplicates_sent >= expected.size && r.reordered > 0,
    );
    expect(report.reordered).toBeGreaterThan(0);
    const outcomes = await fetch(`${merchant.url}/outcomes`).then((r) => json<Array<{ order: string; status: string }>>(r));
    expect(outcomes.map((o) => o.order).sort()).toEqual([...expected.keys()].sort());
    for (const o of outcomes) expect(o.status).toBe(expected.get(o.order));
    const fulfilments = await fetch(`${merchant.url}/fulfilments`).then((r) => json<unknown[]>(r));
    expect(fulfilments).toHaveLength(2);
  });
});
