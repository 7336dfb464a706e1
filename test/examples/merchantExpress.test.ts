import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { registerWebhookEndpoint, startMerchant, type Merchant } from '../../examples/merchant-express/merchant';
import { createClientAccount, useGateway, type ClientAccount } from '../../packages/client/test/support';
import { waitFor } from '../support/wait';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'merchant-express-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function json<T = any>(res: Response): Promise<T> {
  if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

async function placeOrders(merchant: Merchant, n: number): Promise<Array<{ order: string; payment_intent: string }>> {
  return Promise.all(
    Array.from({ length: n }, () =>
      fetch(`${merchant.url}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ amount: 5000, mobile: '923000000' }),
      }).then((r) => json(r)),
    ),
  );
}

describe('examples/merchant-express against the real gateway: one fulfilment per payment under duplicated deliveries', () => {
  const gw = useGateway();
  let account: ClientAccount;
  let merchant: Merchant;
  let endpointId: string;
  const secrets: string[] = [];
  let orders: Array<{ order: string; payment_intent: string }>;

  afterAll(async () => {
    await merchant?.close();
  });

  it('creates express payments for orders and fulfils each paid order on payment.succeeded', async () => {
    account = await createClientAccount(gw.server.baseUrl);
    merchant = await startMerchant({ gatewayUrl: gw.server.baseUrl, apiKey: account.sk, webhookSecrets: secrets, dataDir });
    const endpoint = await registerWebhookEndpoint(gw.server.baseUrl, account.sk, merchant.url);
    endpointId = endpoint.id;
    secrets.push(endpoint.secret);

    orders = await placeOrders(merchant, 3);
    for (const o of orders) expect(o.payment_intent).toMatch(/^pay_/);
    // 923000000 succeeds at +5 s: move the account's sandbox clock rather than wait.
    await account.client.POST('/sandbox/clock/advance', { body: { seconds: 10 } });

    for (const o of orders) {
      const order = await waitFor(
        () => fetch(`${merchant.url}/orders/${o.order}`).then((r) => json(r)),
        (v) => v.status === 'fulfilled',
      );
      expect(order.payment_intent).toBe(o.payment_intent);
    }
  });

  it('re-sent deliveries (concurrent copies, and after a merchant restart) are accepted and change nothing', async () => {
    const path = { id: endpointId };
    const { data: deliveries } = await account.client.GET('/webhook_endpoints/{id}/deliveries', { params: { path } });
    const succeeded = deliveries.data.filter((d) => d.event_type === 'payment.succeeded');
    expect(succeeded).toHaveLength(3);

    const resend = () =>
      Promise.all(
        succeeded.flatMap((d) =>
          [1, 2].map(() =>
            account.client.POST('/webhook_endpoints/{id}/deliveries/{delivery_id}/retry', { params: { path: { id: endpointId, delivery_id: d.id } } }),
          ),
        ),
      );
    for (const { data } of await resend()) {
      expect(data.state).toBe('DELIVERED');
      expect(data.last_status).toBe(200);
    }

    // The shop restarts (same port, so the endpoint URL still points at it) and reads its records back.
    const port = Number(new URL(merchant.url).port);
    await merchant.close();
    merchant = await startMerchant({ gatewayUrl: gw.server.baseUrl, apiKey: account.sk, webhookSecrets: secrets, dataDir, port });
    for (const { data } of await resend()) expect(data.last_status).toBe(200);

    const fulfilments = await fetch(`${merchant.url}/fulfilments`).then((r) => json<Array<{ payment_intent: string }>>(r));
    expect(fulfilments.map((f) => f.payment_intent).sort()).toEqual(orders.map((o) => o.payment_intent).sort());
  });

  it('refuses a delivery whose signature does not match (400), and fulfils nothing for it', async () => {
    const { data: deliveries } = await account.client.GET('/webhook_endpoints/{id}/deliveries', { params: { path: { id: endpointId } } });
    const d = deliveries.data[0]!;
    expect(d.signature_header).toMatch(/^t=/);
    const res = await fetch(`${merchant.url}/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'service-signature': d.signature_header!, 'service-event-id': 'evt_forged' },
      body: d.request_body!.replace('"amount":5000', '"amount":5001'),
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toBe('signature_mismatch');
    expect(await fetch(`${merchant.url}/fulfilments`).then((r) => json<unknown[]>(r))).toHaveLength(3);
  });
});
