import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../packages/client/src/index';
import { useGateway } from '../../packages/client/test/support';
import { ROOT } from '../support/processes';
import { waitFor } from '../support/wait';
import { readmeBlock, runTsSnippet } from './readmeSnippets';

describe('README "Tools": the snippets run as written', () => {
  const gw = useGateway();

  it('@pgw/client: creates an account and an express payment, and catches a 404 as PgwError', async () => {
    const out = await runTsSnippet(readmeBlock('### @pgw/client (typed REST client)'), { PGW_BASE_URL: gw.server.baseUrl }, 'client');
    expect(out).toMatch(/^pay_[0-9A-Za-z]{24} PENDING$/m);
    expect(out).toMatch(/^404 resource_not_found req_[0-9A-Za-z]+$/m);
  });

  it('example merchant app: the commands of the block start the shop and an order gets fulfilled', async () => {
    const [gateway, merchantCmd, curl] = readmeBlock('### Example merchant app', 'sh').split('\n');
    // The gateway of this test runs with the env the first line sets.
    expect(gateway).toMatch(/^WEBHOOK_ALLOW_PRIVATE_NETWORKS=true npm start\b/);
    const file = /^npx tsx (\S+)/.exec(merchantCmd!)?.[1];
    expect(file).toBeDefined();
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'readme-merchant-'));
    const example = startExample(file!, { PGW_BASE_URL: gw.server.baseUrl, MERCHANT_PORT: '0', MERCHANT_DATA_DIR: dataDir });
    try {
      const out = await example.printed('webhook endpoint');
      const merchantUrl = /merchant listening on (\S+)/.exec(out)?.[1];
      const apiKey = /PGW_API_KEY=(sk_test_\w+)/.exec(out)?.[1];
      expect(merchantUrl, out).toBeDefined();
      expect(apiKey, out).toBeDefined();

      // The curl line, sent to the port the shop took.
      const route = /localhost:4242(\/\S+)/.exec(curl!)?.[1];
      const body = /-d '([^']+)'/.exec(curl!)?.[1];
      const res = await fetch(`${merchantUrl}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(res.status).toBe(201);
      const { order } = (await res.json()) as { order: string };

      // "About 5 s later": the sandbox clock moves instead.
      await createClient({ baseUrl: gw.server.baseUrl, apiKey }).POST('/sandbox/clock/advance', { body: { seconds: 10 } });
      const fulfilled = await waitFor(
        () => fetch(`${merchantUrl}/orders/${order}`).then((r) => r.json() as Promise<{ status: string }>),
        (o) => o.status === 'fulfilled',
      );
      expect(fulfilled.status).toBe('fulfilled');
    } finally {
      await example.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('checkout page with live status: the commands start the shop; an order gives a payment and a page with a client token, no key', async () => {
    const [gateway, exampleCmd] = readmeBlock('### Checkout page with live status', 'sh').split('\n');
    expect(gateway).toMatch(/^npm start\b/);
    const file = /^npx tsx (\S+)/.exec(exampleCmd!)?.[1];
    expect(file).toBeDefined();
    const example = startExample(file!, { PGW_BASE_URL: gw.server.baseUrl, MERCHANT_PORT: '0' });
    try {
      const out = await example.printed('checkout page on');
      const shopUrl = /checkout page on (\S+)/.exec(out)?.[1];
      const apiKey = /PGW_API_KEY=(sk_test_\w+)/.exec(out)?.[1];
      expect(shopUrl, out).toBeDefined();
      expect(apiKey, out).toBeDefined();
      await expect(fetch(shopUrl!).then((r) => r.text())).resolves.toContain('Pay with Multicaixa Express');

      // The form's POST, as the browser sends it.
      const ordered = await fetch(`${shopUrl}/orders`, { method: 'POST', body: new URLSearchParams({ mobile: '923000000' }), redirect: 'manual' });
      expect(ordered.status).toBe(303);
      const order = /^\/orders\/([0-9A-F]+)$/.exec(ordered.headers.get('location') ?? '')?.[1];
      expect(order, ordered.headers.get('location') ?? '').toBeDefined();

      const page = await fetch(`${shopUrl}/orders/${order}`);
      expect(page.status).toBe(200);
      expect(page.headers.get('cache-control')).toBe('no-store');
      expect(page.headers.get('content-security-policy')).toContain(`connect-src ${gw.server.baseUrl}`);
      const html = await page.text();
      expect(html).not.toContain(apiKey);
      expect(html).not.toMatch(/sk_test_/);
      const config = JSON.parse(/<script type="application\/json" id="checkout-config">(.*?)<\/script>/.exec(html)![1]!);

      // The payment the shop made with its key, and the token that reads it.
      const pgw = createClient({ baseUrl: gw.server.baseUrl, apiKey });
      const { data: payment } = await pgw.GET('/payment_intents/{id}', { params: { path: { id: config.paymentId } } });
      expect([payment.amount, payment.payment_method, payment.customer?.mobile, payment.merchant_reference]).toEqual([5000, 'multicaixa_express', '923000000', `order-${order}`]);
      const view = await fetch(`${gw.server.baseUrl}/v1/public/payments/${config.paymentId}?client_token=${config.clientToken}`);
      expect(view.status).toBe(200);
      expect(((await view.json()) as { id: string }).id).toBe(config.paymentId);
    } finally {
      await example.stop();
    }
  });
});

/** Runs an example's entry file with tsx, as `npx tsx <file>` does; `printed` waits for a line of its output. */
function startExample(file: string, env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, file)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return {
    /** Everything printed once `text` is (or once the process has exited). */
    printed: (text: string) => waitFor(async () => out, (o) => o.includes(text) || child.exitCode !== null, 60_000, 50),
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
