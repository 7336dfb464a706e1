// Issue 18 in a real browser: the merchant's own page (examples/client-token, served from ANOTHER origin by
// its own server on another port) follows an express payment with a client token over EventSource and
// over graphql-ws, sees PROCESSING and SUCCEEDED live, and both streams end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createAccount, type TestAccount } from '../support/accounts';
import { chromiumAvailable, launchPhoneBrowser, warnIfNoChromium, type PhoneBrowser } from '../support/browser';
import { type TestServer } from '../support/server';
import { startExampleServer } from '../../examples/client-token/server.mjs';
import { createExpressPayment } from './support';
import { sharedGateway } from '../support/server';

warnIfNoChromium('test/clientTokens/browser.test.ts (client tokens from another origin)');

const LIVE_TIMEOUT = 30_000;

describe.skipIf(!chromiumAvailable)('a merchant page on another origin follows a payment with a client token', () => {
  let server: TestServer;
  let browser: PhoneBrowser;
  let merchant: TestAccount;
  let example: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    server = await sharedGateway();
    merchant = await createAccount(server.baseUrl, 'Loja Kianda');
    example = await startExampleServer({ gatewayUrl: server.baseUrl, secretKey: merchant.sk });
    browser = await launchPhoneBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await example?.close();
    await server?.stop();
  });

  const statuses = (page: Page, list: 'sse' | 'ws') => page.locator(`#${list}-statuses li`).allTextContents();

  it('sees PROCESSING and SUCCEEDED live over graphql-ws and EventSource, then both streams close', async () => {
    expect(new URL(example.url).origin).not.toBe(new URL(server.baseUrl).origin);
    // The rail runs on real time (PROCESSING at +2 s, SUCCEEDED at +5 s). The graphql-ws page opens at
    // PENDING; the EventSource page opens once PROCESSING is shown (that change has no event, so a stream
    // sees it in its snapshot) and must see SUCCEEDED arrive. On a slow machine either may open too late:
    // then a new payment is used (3 tries at most).
    for (let attempt = 1; ; attempt++) {
      const payment = await createExpressPayment(merchant, '923000000');
      const ws = await browser.newPage();
      await ws.page.goto(`${example.url}/?via=ws&payment=${payment.id}`);
      await ws.page.locator('#ws-statuses li').first().waitFor({ timeout: LIVE_TIMEOUT });
      const wsFirst = (await statuses(ws.page, 'ws'))[0];
      await ws.page.locator('#ws-statuses li', { hasText: 'PROCESSING' }).waitFor({ timeout: LIVE_TIMEOUT });
      const sse = await browser.newPage();
      await sse.page.goto(`${example.url}/?via=sse&payment=${payment.id}`);
      await sse.page.locator('#sse-statuses li').first().waitFor({ timeout: LIVE_TIMEOUT });
      const sseFirst = (await statuses(sse.page, 'sse'))[0];
      if ((wsFirst !== 'PENDING' || sseFirst !== 'PROCESSING') && attempt < 3) {
        await ws.page.close();
        await sse.page.close();
        continue;
      }
      expect([wsFirst, sseFirst]).toEqual(['PENDING', 'PROCESSING']);

      for (const [{ page }, list] of [[ws, 'ws'], [sse, 'sse']] as const) {
        await page.locator(`#${list}-state`, { hasText: 'closed' }).waitFor({ timeout: LIVE_TIMEOUT });
        await expect(page.getByRole('status').textContent()).resolves.toContain('SUCCEEDED');
      }
      expect(await statuses(ws.page, 'ws')).toEqual(['PENDING', 'PROCESSING', 'SUCCEEDED']);
      expect(await statuses(sse.page, 'sse')).toEqual(['PROCESSING', 'SUCCEEDED']);
      // No CORS refusal, no uncaught error, on either page.
      expect([...ws.errors, ...sse.errors]).toEqual([]);
      await ws.page.close();
      await sse.page.close();
      return;
    }
  }, 150_000);
});
