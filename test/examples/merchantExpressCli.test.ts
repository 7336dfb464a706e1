import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startMerchant, type Merchant } from '../../examples/merchant-express/merchant';
import { startPgw, tempConfigHome, type PgwProcess } from '../../packages/cli/test/support/pgw';
import { createClientAccount, useGateway } from '../../packages/client/test/support';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'merchant-express-cli-'));
const configs = [tempConfigHome(), tempConfigHome()];
const listeners: PgwProcess[] = [];
let merchant: Merchant | undefined;

afterAll(async () => {
  for (const p of listeners) await p.signal('SIGINT');
  await merchant?.close();
  for (const c of configs) c.cleanup();
  rmSync(dataDir, { recursive: true, force: true });
});

/**
 * The shop receives its events through `pgw listen --forward-to` instead of a webhook endpoint (a gateway
 * that cannot reach it). Two listeners run at once (separate config dirs, so two secrets the shop both
 * accepts): every event arrives twice, and each paid order is still fulfilled once.
 */
describe('examples/merchant-express fed by pgw listen --forward-to (two listeners: every event twice)', () => {
  const gw = useGateway();

  it('fulfils each paid order exactly once', async () => {
    const account = await createClientAccount(gw.server.baseUrl);
    const secrets: string[] = [];
    merchant = await startMerchant({ gatewayUrl: gw.server.baseUrl, apiKey: account.sk, webhookSecrets: secrets, dataDir });

    for (const config of configs) {
      config.env.PGW_API_KEY = account.sk;
      config.env.PGW_BASE_URL = gw.server.baseUrl;
      const p = startPgw(['listen', '--forward-to', `${merchant.url}/webhooks`, '--events', 'payment.succeeded'], config.env);
      listeners.push(p);
      const secret = /whsec_[0-9a-f]+/.exec(await p.line(() => true))?.[0];
      expect(secret).toBeDefined();
      secrets.push(secret!);
    }
    expect(secrets[0]).not.toBe(secrets[1]);

    const orders = await Promise.all(
      [1, 2].map(() =>
        fetch(`${merchant!.url}/orders`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ amount: 5000, mobile: '923000000' }),
        }).then((r) => r.json() as Promise<{ order: string; payment_intent: string }>),
      ),
    );
    await account.client.POST('/sandbox/clock/advance', { body: { seconds: 10 } });

    // The advance fired the rail steps before answering: both payment.succeeded events exist now.
    const { data: events } = await account.client.GET('/events', { params: { query: { limit: 50 } } });
    const eventIds = orders.map((o) => events.data.find((e) => e.type === 'payment.succeeded' && e.data.id === o.payment_intent)?.id);
    expect(eventIds.every(Boolean)).toBe(true);
    // Each listener prints one line per forwarded event with the shop's answer: both forwarded both (200).
    for (const p of listeners) {
      for (const id of eventIds) expect(await p.line((l) => l.includes(id!))).toMatch(/ 200 /);
    }

    const fulfilments = (await fetch(`${merchant.url}/fulfilments`).then((r) => r.json())) as Array<{ payment_intent: string }>;
    expect(fulfilments.map((f) => f.payment_intent).sort()).toEqual(orders.map((o) => o.payment_intent).sort());
  });
});
