import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmbeddedMongo, type EmbeddedMongo } from '@pgw/embedded-mongo';
import { createAccount } from '../support/accounts';
import { ApiClient } from '../support/client';
import { chromiumAvailable, launchPhoneBrowser, warnIfNoChromium, type PhoneBrowser } from '../support/browser';
import { spawnGateway, type GatewayProcess } from '../support/processes';
import { startTestServer, type TestServer } from '../support/server';
import { advanceClock, createPayment, expressBody, referenceBody } from '../support/payments';
import { ensureDashboardBundle, LIVE_TIMEOUT, paymentRow, recordedTexts, recordTexts, signInToPayments, UI_TIMEOUT, waitForRowStatus } from './support/dashboard';

/**
 * The dashboard follows payments made through ANOTHER gateway process on the same database: the page is
 * served by gateway A (in this process), the payments are created and paid through gateway B (a child
 * process), and the table shows them and their status changes live, through the event bus that crosses
 * processes.
 */
// Each test walks several pages and waits for live changes on a shared, loaded 2-core machine: room for that.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });
warnIfNoChromium('test/dashboard/appCrossInstance.browser.test.ts (the dashboard across gateways)');

describe.skipIf(!chromiumAvailable)('dashboard app across gateway processes', () => {
  let engine: EmbeddedMongo;
  let a: TestServer;
  let b: GatewayProcess;
  let browser: PhoneBrowser;

  beforeAll(async () => {
    await ensureDashboardBundle();
    engine = await startEmbeddedMongo({ port: 0 });
    a = await startTestServer({ MONGODB_URI: engine.uri });
    b = await spawnGateway(engine.uri);
    browser = await launchPhoneBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await b?.stop();
    await a?.stop();
    await engine?.close();
  }, 60_000);

  it('payments made and paid through another gateway appear and change status live', async () => {
    const account = await createAccount(a.baseUrl);
    const viaB = new ApiClient(b.url, account.sk);
    const { page } = await browser.newPage();
    await signInToPayments(page, a.baseUrl, account.sk);
    await page.getByText('Live', { exact: true }).waitFor({ timeout: UI_TIMEOUT });

    const express = await createPayment(viaB, expressBody('923000000', 4200));
    await recordTexts(page, `tr[data-id="${express.id}"] .badge`);
    // Once the row is shown, its rail (+2 s, +5 s) moves on by the sandbox clock, advanced through B too:
    // the changes still have to cross to A and reach the page live.
    await paymentRow(page, express.id).waitFor({ timeout: LIVE_TIMEOUT });
    await advanceClock(viaB, 5);
    await waitForRowStatus(page, express.id, 'SUCCEEDED');
    const seen = await recordedTexts(page);
    expect(seen.at(-1)).toBe('Succeeded');
    expect(seen.length).toBeGreaterThan(1);

    const ref = await createPayment(viaB, referenceBody(3100));
    await waitForRowStatus(page, ref.id, 'PENDING');
    const paid = await viaB.post('/sandbox/simulate/reference_paid', { reference: ref.reference.number });
    expect(paid.status, paid.text).toBe(200);
    await waitForRowStatus(page, ref.id, 'SUCCEEDED');
    expect(await paymentRow(page, ref.id).textContent()).toContain('Reference');
    await page.close();
  });
});
