import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createAccount, type TestAccount } from '../support/accounts';
import type { TestServer } from '../support/server';
import {
  chromiumAvailable,
  fitsViewportWidth,
  launchPhoneBrowser,
  recordStatusTexts,
  screenshot,
  statusHistory,
  warnIfNoChromium,
  type PhoneBrowser,
} from '../support/browser';
import { createLink, createSession, waitFor } from '../links/support/gateway';
import { sharedGateway } from '../support/server';
import { advanceClock } from '../support/payments';

/**
 * The public pages in a real headless Chromium on a phone-sized screen, driven the way a person
 * would: by labels and roles. Payments progress on the sandbox rail (moved on with the account's
 * sandbox clock rather than waited for in real time: the rail in real time is
 * test/payments/rail-realtime.test.ts's) and the page follows them through the public event stream,
 * without reloads.
 */
warnIfNoChromium('test/browser/pages.test.ts (payment-link and checkout pages)');

const LIVE_TIMEOUT = 25_000;

describe.skipIf(!chromiumAvailable)('payment pages in Chromium', () => {
  let server: TestServer;
  let browser: PhoneBrowser;
  let shop: http.Server;
  let shopUrl: string;
  let merchant: TestAccount;

  beforeAll(async () => {
    server = await sharedGateway();
    browser = await launchPhoneBrowser();
    // The merchant's own site, where checkout sends the customer back.
    shop = http.createServer((req, res) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(`<!doctype html><title>Shop</title><h1>${req.url?.startsWith('/paid') ? 'Thank you for your order' : 'Your cart'}</h1>`);
    });
    await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
    shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
    merchant = await createAccount(server.baseUrl, 'Loja Kianda');
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => shop?.close(r));
    await server?.stop();
  });

  const status = (page: Page) => page.getByRole('status');
  const waitForStatus = (page: Page, word: string) =>
    status(page).filter({ hasText: word }).waitFor({ state: 'visible', timeout: LIVE_TIMEOUT });

  /**
   * Once the page shows the express payment it just made (its status region carries a status), moves
   * the merchant's sandbox clock past the rail's outcome (+5 s): the page must then follow it live.
   */
  async function moveRailOn(page: Page): Promise<void> {
    await status(page).and(page.locator('[data-status]')).waitFor({ timeout: LIVE_TIMEOUT });
    await advanceClock(merchant.api, 10);
  }

  async function openLinkPage(link: any) {
    const { page, errors } = await browser.newPage();
    const res = await page.goto(`${server.baseUrl}/pay/${link.code}`);
    expect(res?.status()).toBe(200);
    return { page, errors };
  }

  it('express 923000000: the status goes from PENDING to SUCCEEDED by itself', async () => {
    const link = await createLink(merchant.api, { amount: 7500, description: 'Camisola oficial' });
    const { page, errors } = await openLinkPage(link);

    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('7 500 AOA');
    expect(await page.getByText('Camisola oficial').isVisible()).toBe(true);
    expect(await page.getByRole('radio', { name: 'Multicaixa Express' }).isChecked()).toBe(true);
    expect(await page.getByRole('radio', { name: 'Multicaixa Reference' }).count()).toBe(1);
    const mobile = page.getByLabel('Mobile number');
    expect(await mobile.getAttribute('inputmode')).toBe('numeric');
    expect(await fitsViewportWidth(page)).toBe(true);
    await screenshot(page, 'link-page-phone');

    await page.getByRole('radio', { name: 'Multicaixa Express' }).check();
    await mobile.fill('923000000');
    await recordStatusTexts(page);
    await page.getByRole('button', { name: 'Pay' }).click();
    await moveRailOn(page);
    await waitForStatus(page, 'SUCCEEDED');

    const seen = await statusHistory(page);
    // PENDING → PROCESSING emits no event (spec), so the stream may or may not show PROCESSING.
    expect(seen[0]).toContain('PENDING');
    expect(seen.at(-1)).toContain('SUCCEEDED');
    expect(seen.every((t) => /PENDING|PROCESSING|SUCCEEDED/.test(t))).toBe(true);
    expect(await status(page).getAttribute('aria-live')).toBe('polite');
    await screenshot(page, 'link-page-express-succeeded');

    const intents = (await merchant.api.get('/payment_intents?limit=5')).body.data;
    const intent = intents.find((p: any) => p.metadata.payment_link === link.id);
    expect(intent).toMatchObject({ status: 'SUCCEEDED', amount: 7500, customer: { mobile: '923000000' }, api_key_id: null });
    expect(errors).toEqual([]);
  });

  it('express 923000001: FAILED is shown and the person can try again', async () => {
    const link = await createLink(merchant.api, { amount: 1200 });
    const { page, errors } = await openLinkPage(link);
    await page.getByLabel('Mobile number').fill('923000001');
    await page.getByRole('button', { name: 'Pay' }).click();
    await moveRailOn(page);
    await waitForStatus(page, 'FAILED');
    expect(await status(page).textContent()).toContain('declined');
    // The form comes back for another attempt.
    expect(await page.getByRole('button', { name: 'Pay' }).isVisible()).toBe(true);
    await screenshot(page, 'link-page-express-failed');
    expect(errors).toEqual([]);
  });

  it('a malformed mobile number: the API error is shown next to the field', async () => {
    const link = await createLink(merchant.api, { amount: 1200 });
    const { page } = await openLinkPage(link);
    const mobile = page.getByLabel('Mobile number');
    await mobile.fill('12345');
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.getByText('Enter a valid mobile number').waitFor({ timeout: 10_000 });
    expect(await mobile.getAttribute('aria-invalid')).toBe('true');
    expect(await status(page).textContent()).toBe('');
    await screenshot(page, 'link-page-invalid-mobile');
  });

  it('reference: the page shows entity and number; paying them turns the status to SUCCEEDED', async () => {
    const link = await createLink(merchant.api, { amount: 25_000, description: 'Propina de Março' });
    const { page, errors } = await openLinkPage(link);
    await page.getByRole('radio', { name: 'Multicaixa Reference' }).check();
    expect(await page.getByLabel('Mobile number').isVisible()).toBe(false);
    await page.getByRole('button', { name: 'Pay' }).click();
    await waitForStatus(page, 'PENDING');

    const entity = (await page.getByTestId('reference-entity').textContent())?.trim() ?? '';
    const number = (await page.getByTestId('reference-number').textContent())?.trim() ?? '';
    expect(entity).toMatch(/^\d{5}$/);
    expect(number).toMatch(/^\d{9}$/);
    expect(entity).toBe((await merchant.api.get('/account')).body.reference_entity);
    await screenshot(page, 'link-page-reference-pending');

    const sim = await merchant.api.post('/sandbox/simulate/reference_paid', { reference: number });
    expect(sim.status, sim.text).toBe(200);
    await waitForStatus(page, 'SUCCEEDED');
    await screenshot(page, 'link-page-reference-succeeded');
    expect(errors).toEqual([]);
  });

  it('a reload during a payment picks the same payment up again instead of offering to pay twice', async () => {
    const link = await createLink(merchant.api, { amount: 6000 });
    const { page, errors } = await openLinkPage(link);
    await page.getByRole('radio', { name: 'Multicaixa Reference' }).check();
    await page.getByRole('button', { name: 'Pay' }).click();
    await waitForStatus(page, 'PENDING');
    const number = (await page.getByTestId('reference-number').textContent())?.trim() ?? '';
    await page.reload();
    await waitForStatus(page, 'PENDING');
    expect((await page.getByTestId('reference-number').textContent())?.trim()).toBe(number);
    expect(await page.getByRole('button', { name: 'Pay' }).isVisible()).toBe(false);
    await merchant.api.post('/sandbox/simulate/reference_paid', { reference: number });
    await waitForStatus(page, 'SUCCEEDED');
    const intents = (await merchant.api.get('/payment_intents?limit=20')).body.data.filter((p: any) => p.metadata.payment_link === link.id);
    expect(intents).toHaveLength(1);
    expect(errors).toEqual([]);
  });

  it('a link that offers only one method shows only that one', async () => {
    const link = await createLink(merchant.api, { amount: 3000, methods: ['multicaixa_reference'] });
    const { page } = await openLinkPage(link);
    expect(await page.getByRole('radio').count()).toBe(1);
    expect(await page.getByRole('radio', { name: 'Multicaixa Reference' }).isChecked()).toBe(true);
    expect(await page.getByLabel('Mobile number').count()).toBe(0);
  });

  it('a deactivated link answers 410 with a clear page', async () => {
    const link = await createLink(merchant.api, { amount: 500 });
    expect((await merchant.api.delete(`/payment_links/${link.id}`)).status).toBe(200);
    const { page } = await browser.newPage();
    const res = await page.goto(`${server.baseUrl}/pay/${link.code}`);
    expect(res?.status()).toBe(410);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('no longer active');
    expect(await page.getByRole('button', { name: 'Pay' }).count()).toBe(0);
    await screenshot(page, 'link-page-inactive-410');
  });

  it('checkout: paying lands on success_url; the cancel link goes to cancel_url', async () => {
    const session = await createSession(merchant.api, {
      amount: 32_000,
      merchant_reference: 'order-2001',
      success_url: `${shopUrl}/paid?order=2001`,
      cancel_url: `${shopUrl}/cart`,
    });
    const { page, errors } = await browser.newPage();
    // The page's own clock, so that its 1.5 s before the way back to the shop is moved on below rather
    // than waited for (it ticks as usual meanwhile).
    await page.clock.install();
    const res = await page.goto(`${server.baseUrl}/checkout/${session.id}`);
    expect(res?.status()).toBe(200);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('32 000 AOA');
    expect(await page.getByRole('link', { name: /Cancel/ }).getAttribute('href')).toBe(`${shopUrl}/cart`);
    expect(await fitsViewportWidth(page)).toBe(true);
    await screenshot(page, 'checkout-page-phone');

    await page.getByLabel('Mobile number').fill('923000000');
    await page.getByRole('button', { name: 'Pay' }).click();
    await moveRailOn(page);
    await waitForStatus(page, 'SUCCEEDED');
    await screenshot(page, 'checkout-page-succeeded');
    expect(await page.getByRole('link', { name: /Cancel/ }).count()).toBe(0);
    await page.clock.fastForward(1_500);
    await page.waitForURL(`${shopUrl}/paid?order=2001`, { timeout: LIVE_TIMEOUT });
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Thank you for your order');

    const done = await waitFor(
      () => merchant.api.get(`/checkout/sessions/${session.id}`).then((r) => r.body),
      (s: any) => s.status === 'COMPLETED',
    );
    const intent = (await merchant.api.get(`/payment_intents/${done.payment_intent}`)).body;
    expect(intent).toMatchObject({ status: 'SUCCEEDED', merchant_reference: 'order-2001', metadata: { checkout_session: session.id } });
    expect(errors).toEqual([]);

    // Back on the session's page afterwards: it is closed.
    const again = await page.goto(`${server.baseUrl}/checkout/${session.id}`);
    expect(again?.status()).toBe(410);
    await screenshot(page, 'checkout-page-completed-410');
  });

  it('checkout: the cancel link takes the person back to the shop', async () => {
    const session = await createSession(merchant.api, { amount: 1500, cancel_url: `${shopUrl}/cart` });
    const { page } = await browser.newPage();
    await page.goto(`${server.baseUrl}/checkout/${session.id}`);
    await page.getByRole('link', { name: /Cancel/ }).click();
    await page.waitForURL(`${shopUrl}/cart`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Your cart');
  });

  it('checkout: an expired session answers 410 with a way back to the shop', async () => {
    const account = await createAccount(server.baseUrl);
    const session = await createSession(account.api, { amount: 1500, cancel_url: `${shopUrl}/cart` });
    expect((await account.api.post('/sandbox/clock/advance', { seconds: 1801 })).status).toBe(200);
    const { page } = await browser.newPage();
    const res = await page.goto(`${server.baseUrl}/checkout/${session.id}`);
    expect(res?.status()).toBe(410);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('expired');
    expect(await page.getByRole('link', { name: 'Return to the shop' }).getAttribute('href')).toBe(`${shopUrl}/cart`);
    await screenshot(page, 'checkout-page-expired-410');
  });
});
