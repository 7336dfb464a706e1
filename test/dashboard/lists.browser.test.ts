import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAccount, type TestAccount } from '../support/accounts';
import { chromiumAvailable, launchPhoneBrowser, screenshot, warnIfNoChromium, type PhoneBrowser } from '../support/browser';
import { advanceClock, createPayment, expressBody } from '../support/payments';
import { sharedGateway, type TestServer } from '../support/server';
import { waitFor } from '../support/wait';
import { ensureDashboardBundle, expectAxeClean, LIVE_TIMEOUT, signInThroughForm, UI_TIMEOUT, unexpectedErrors } from './support/dashboard';
import { checkPage, confirmDialog, LAYOUTS, openPage, useLayout, type Layout } from './support/product';

/**
 * Issue 58, lists first (contract decisions, "Sandbox dashboard: a data product"): Events, Logs,
 * Checkout sessions, Payment links and API keys open on a compact table with at least 10 rows on a
 * 1280×800 screen and 4 on 390×844; their filters live in the URL and survive a reload; a row opens its
 * detail beside the list; Logs are live; keys say when they were last used; revoking and deactivating
 * ask first; a refused load says so in words. Real gateway, real Chromium, a fresh account per test.
 */
vi.setConfig({ testTimeout: 240_000, hookTimeout: 120_000 });
warnIfNoChromium('test/dashboard/lists.browser.test.ts (the dashboard’s lists)');

/** Rows of the table named `name` wholly inside the window as the page opened (nothing scrolled). */
async function rowsOnFirstScreen(page: Page, name: string): Promise<number> {
  return page.getByRole('table', { name }).locator('tbody tr').evaluateAll((rows) => {
    window.scrollTo(0, 0);
    return rows.filter((r) => r.getBoundingClientRect().bottom <= window.innerHeight).length;
  });
}

const minimumRows = (layout: Layout) => (layout.viewport.width >= 1280 ? 10 : 4);

describe.skipIf(!chromiumAvailable)('the dashboard’s lists, in Chromium', () => {
  let server: TestServer;
  let browser: PhoneBrowser;

  beforeAll(async () => {
    await ensureDashboardBundle();
    // Dozens of rows and the dashboard's own calls on one key: room for them.
    server = await sharedGateway({ RATE_LIMIT_PER_MINUTE: '100000' });
    browser = await launchPhoneBrowser();
  });

  afterAll(async () => {
    await browser?.close();
  });

  const signedIn = async (account: TestAccount) => {
    const { page, errors } = await browser.newPage();
    await signInThroughForm(page, server.baseUrl, account.sk);
    return { page, errors };
  };

  it('each list opens on its rows (10 at 1280×800, 4 at 390×844), light and dark, axe-clean, with its detail beside it', async () => {
    const account = await createAccount(server.baseUrl, 'Loja Listas');
    // The rows, made at once: no list's order is read. The payments first, for their rail runs meanwhile.
    const times = (n: number, make: (i: number) => Promise<unknown>) => Promise.all(Array.from({ length: n }, (_, i) => make(i)));
    const created = async (path: string, body: Record<string, unknown>) => expect((await account.api.post(path, body)).status).toBe(201);
    await times(6, (i) => createPayment(account.api, expressBody('923000000', 1000 + i)));
    await Promise.all([
      times(12, (i) => created('/checkout/sessions', { amount: 2000 + i, merchant_reference: `order-${i}` })),
      times(12, (i) => created('/payment_links', { amount: 3000 + i, description: `Camisola ${i}` })),
      times(9, (i) => created('/api_keys', { name: `reader ${i}`, permissions: ['payment_intents:read'] })),
    ]);
    // Every payment has reached its end (its events are stored) before the lists are looked at, in real
    // time (an advanced clock would put its banner above the lists, whose first screen is measured);
    // signing in meanwhile opens no list yet.
    const [{ page, errors }] = await Promise.all([
      signedIn(account),
      waitFor(async () => (await account.api.get('/events?limit=100')).body.data.length, (n) => n >= 12, LIVE_TIMEOUT),
    ]);
    // Events last: its detail is opened next, and the next layout starts on another page.
    const views: Array<[view: string, table: string]> = [
      ['Logs', 'Logs'],
      ['Checkout sessions', 'Checkout sessions'],
      ['Payment links', 'Payment links'],
      ['API keys', 'API keys'],
      ['Events', 'Events'],
    ];
    for (const layout of LAYOUTS) {
      await useLayout(page, layout);
      for (const [view, table] of views) {
        await openPage(page, view);
        await page.getByRole('table', { name: table }).locator('tbody tr').nth(minimumRows(layout) - 1).waitFor({ timeout: UI_TIMEOUT });
        await checkPage(page, `list-${view}`, layout);
        expect(await rowsOnFirstScreen(page, table), `${view} (${layout.name}) rows on the first screen`).toBeGreaterThanOrEqual(minimumRows(layout));
        // No pager under a list that fits one page.
        expect(await page.getByRole('button', { name: /^(Next|Previous)$/ }).count(), `${view} pager`).toBe(0);
      }
      // A row's detail opens in a panel beside the list and closes back onto it.
      await page.getByRole('table', { name: 'Events' }).locator('tbody tr button.row-open').first().click();
      const panel = page.getByRole('dialog');
      await panel.getByRole('heading', { level: 3, name: 'Data' }).waitFor({ timeout: UI_TIMEOUT });
      await checkPage(page, 'list-event-detail', layout);
      await page.keyboard.press('Escape');
      await panel.waitFor({ state: 'detached', timeout: UI_TIMEOUT });
    }
    expect(unexpectedErrors(errors)).toEqual([]);
    await page.close();
  });

  it('Events filter by type and object in the URL, survive a reload, and link to their payment', async () => {
    const account = await createAccount(server.baseUrl);
    const [one, two] = await Promise.all([createPayment(account.api, expressBody('923000000', 5000)), createPayment(account.api, expressBody('923000000', 6000))]);
    // Both succeed on the sandbox clock (the rail's +5 s): the filters are what is proven, not the rail's timing.
    await advanceClock(account.api, 5);
    expect((await account.api.get('/events?type=payment.succeeded')).body.data).toHaveLength(2);
    const { page, errors } = await signedIn(account);
    await openPage(page, 'Events');
    const table = page.getByRole('table', { name: 'Events' });
    await table.locator('tbody tr').nth(3).waitFor({ timeout: UI_TIMEOUT });

    await page.getByLabel('Type').selectOption({ label: 'payment.succeeded' });
    await page.waitForURL(/\/dashboard\/events\?type=PAYMENT_SUCCEEDED$/, { timeout: UI_TIMEOUT });
    await waitFor(async () => (await table.locator('code.event-type').allTextContents()).join(','), (t) => t === 'payment.succeeded,payment.succeeded', UI_TIMEOUT);
    await page.getByLabel('Object id').fill(one.id);
    await page.getByLabel('Object id').press('Enter');
    await page.waitForURL(new RegExp(`type=PAYMENT_SUCCEEDED&object=${one.id}$`), { timeout: UI_TIMEOUT });
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Events' }).waitFor({ timeout: UI_TIMEOUT });
    expect(await page.getByLabel('Type').inputValue()).toBe('PAYMENT_SUCCEEDED');
    expect(await page.getByLabel('Object id').inputValue()).toBe(one.id);
    await waitFor(async () => (await table.locator('tbody tr').count()) === 1 && (await table.getByRole('link').allTextContents()), (ids) => Array.isArray(ids) && ids.join() === one.id, UI_TIMEOUT);
    expect(await table.getByRole('link', { name: two.id }).count()).toBe(0);
    await screenshot(page, 'dashboard-list-events-filtered-phone-light');

    // The event's object is a link to its payment.
    await table.getByRole('link', { name: one.id }).click();
    await page.waitForURL(`${server.baseUrl}/dashboard/payments/${one.id}`, { timeout: UI_TIMEOUT });
    await page.getByRole('heading', { level: 1, name: new RegExp(one.id) }).waitFor({ timeout: UI_TIMEOUT });
    // Back is the filtered list as it was.
    await page.goBack();
    await table.getByRole('link', { name: one.id }).waitFor({ timeout: UI_TIMEOUT });
    expect(page.url()).toContain(`object=${one.id}`);
    expect(unexpectedErrors(errors)).toEqual([]);
    await page.close();
  });

  it('Logs filter by method, status, path and source in the URL, and new requests appear without a reload', async () => {
    const account = await createAccount(server.baseUrl);
    await Promise.all([
      createPayment(account.api, expressBody('923000000', 5000)),
      account.api.get('/payment_intents/pi_doesNotExist').then((res) => expect(res.status).toBe(404)),
      account.api.get('/payment_links').then((res) => expect(res.status).toBe(200)),
    ]);
    const { page, errors } = await signedIn(account);
    await openPage(page, 'Logs');
    const table = page.getByRole('table', { name: 'Logs' });
    const requests = () => table.locator('tbody th button.row-open').allTextContents();
    await table.getByText('GET /v1/payment_links').waitFor({ timeout: UI_TIMEOUT });
    // The dashboard's own requests are left out by default.
    expect(await table.locator('[data-source="DASHBOARD"]').count()).toBe(0);

    // Live: a request made now, with no event behind it yet, shows up when the next event arrives;
    // a payment makes both at once.
    await createPayment(account.api, expressBody('923000000', 7000));
    await waitFor(requests, (r) => r.filter((t) => t === 'POST /v1/payment_intents').length === 2, LIVE_TIMEOUT);

    await page.getByLabel('Method').selectOption('GET');
    await page.getByLabel('Status').selectOption({ label: '4xx refused' });
    await page.getByLabel('Path').fill('/v1/payment_intents');
    await page.getByLabel('Path').press('Enter');
    await page.waitForURL(/\/dashboard\/logs\?method=GET&status=4xx&path=%2Fv1%2Fpayment_intents$/, { timeout: UI_TIMEOUT });
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Logs' }).waitFor({ timeout: UI_TIMEOUT });
    expect(await page.getByLabel('Method').inputValue()).toBe('GET');
    expect(await page.getByLabel('Status').inputValue()).toBe('4xx');
    expect(await page.getByLabel('Path').inputValue()).toBe('/v1/payment_intents');
    await waitFor(requests, (r) => r.join() === 'GET /v1/payment_intents/pi_doesNotExist', UI_TIMEOUT);

    // A row opens its bodies beside the list, pretty-printed.
    await table.getByRole('button', { name: 'GET /v1/payment_intents/pi_doesNotExist' }).click();
    const panel = page.getByRole('dialog', { name: 'GET /v1/payment_intents/pi_doesNotExist' });
    const response = panel.getByRole('region', { name: 'Response body' }).locator('pre');
    expect(JSON.parse((await response.textContent({ timeout: UI_TIMEOUT }))!)).toMatchObject({ error: { code: 'resource_not_found' } });
    expect(await response.textContent()).toContain('\n  ');
    await expectAxeClean(page, 'a log entry');
    await page.getByRole('button', { name: 'Close' }).click();

    // The source: this dashboard's own requests only.
    await page.goto(`${server.baseUrl}/dashboard/logs?source=dashboard`);
    await table.locator('[data-source="DASHBOARD"]').first().waitFor({ timeout: UI_TIMEOUT });
    expect(await table.locator('[data-source="API"]').count()).toBe(0);
    expect(await page.getByLabel('Source').inputValue()).toBe('dashboard');

    // A filter the gateway refuses is said in words with the field's label, and is not an empty list.
    await page.goto(`${server.baseUrl}/dashboard/logs?path=payment_intents`);
    const alert = page.getByRole('alert');
    await alert.waitFor({ timeout: UI_TIMEOUT });
    expect(await alert.textContent()).toMatch(/^The logs could not be loaded: Path: a path starting with "\/"/);
    expect(await page.getByText(/^No request/).count()).toBe(0);
    await screenshot(page, 'dashboard-list-logs-refused-phone-light');
    expect(unexpectedErrors(errors)).toEqual([]);
    await page.close();
  });

  it('Checkout sessions: a list by status in the URL, made from a side panel, opened from its row, live', async () => {
    const account = await createAccount(server.baseUrl);
    const old = (await account.api.post('/checkout/sessions', { amount: 1500 })).body;
    await advanceClock(account.api, 31 * 60);
    const { page, errors } = await signedIn(account);
    await openPage(page, 'Checkout sessions');
    const table = page.getByRole('table', { name: 'Checkout sessions' });
    await table.getByRole('button', { name: old.id }).waitFor({ timeout: UI_TIMEOUT });

    await page.getByRole('button', { name: 'New checkout session' }).click();
    const form = page.getByRole('dialog', { name: 'New checkout session' });
    await form.getByLabel('Amount (AOA)').fill('4200');
    await form.getByLabel('Merchant reference').fill('order-77');
    await form.getByRole('button', { name: 'Create session' }).click();
    const detail = page.getByRole('dialog', { name: 'Checkout session' });
    const made = detail.getByRole('region', { name: /^Checkout session cs_/ });
    await made.getByText('Open', { exact: true }).waitFor({ timeout: UI_TIMEOUT });
    const madeId = (await made.getAttribute('aria-label'))!.replace('Checkout session ', '');
    await expectAxeClean(page, 'a checkout session');
    await detail.getByRole('button', { name: 'Close' }).click();
    await table.getByRole('button', { name: madeId }).waitFor({ timeout: UI_TIMEOUT });

    await page.getByLabel('Status').selectOption('EXPIRED');
    await page.waitForURL(/\/dashboard\/checkout-sessions\?status=expired$/, { timeout: UI_TIMEOUT });
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Checkout sessions' }).waitFor({ timeout: UI_TIMEOUT });
    expect(await page.getByLabel('Status').inputValue()).toBe('EXPIRED');
    await waitFor(() => table.locator('tbody th').allTextContents(), (ids) => ids.join() === old.id, UI_TIMEOUT);
    // An ended session says it expired, not that it "expires".
    await table.getByRole('button', { name: old.id }).click();
    await page.getByRole('dialog', { name: 'Checkout session' }).getByText('Expired', { exact: true }).first().waitFor({ timeout: UI_TIMEOUT });
    expect(await page.getByRole('dialog', { name: 'Checkout session' }).getByText('Expires', { exact: true }).count()).toBe(0);
    await screenshot(page, 'dashboard-list-checkout-expired-phone-light');
    await page.keyboard.press('Escape');

    await page.getByLabel('Status').selectOption('COMPLETED');
    await page.getByText('No session matches').waitFor({ timeout: UI_TIMEOUT });
    // Live: a customer pays the new session, and it joins the completed ones without a reload.
    const paid = await account.api.post(`/public/checkout/sessions/${madeId}/payments`, { payment_method: 'multicaixa_express', customer: { mobile: '923000000' } }, { key: null });
    expect(paid.status, paid.text).toBeLessThan(300);
    // Its payment succeeds on the sandbox clock (the rail's +5 s); the open list shows it by itself.
    await advanceClock(account.api, 5);
    await table.getByRole('button', { name: madeId }).waitFor({ timeout: LIVE_TIMEOUT });
    expect(await table.locator('tbody tr').count()).toBe(1);
    expect(unexpectedErrors(errors)).toEqual([]);
    await page.close();
  });

  it('API keys say when each was last used and what each permission allows; revoke and deactivate ask first', async () => {
    const account = await createAccount(server.baseUrl);
    const [used, unused, link] = (
      await Promise.all([
        account.api.post('/api_keys', { name: 'used', permissions: ['payment_intents:read'] }),
        account.api.post('/api_keys', { name: 'unused', permissions: ['payment_intents:read'] }),
        account.api.post('/payment_links', { amount: 4000 }),
      ])
    ).map((res) => res.body);
    const res = await fetch(`${server.baseUrl}/v1/payment_intents`, { headers: { authorization: `Bearer ${used.secret}` } });
    expect(res.status).toBe(200);
    const { page, errors } = await signedIn(account);
    await openPage(page, 'API keys');
    const table = page.getByRole('table', { name: 'API keys' });
    await table.getByRole('row', { name: 'used', exact: true }).getByTestId('key-last-used').filter({ hasText: 'In the last minute' }).waitFor({ timeout: UI_TIMEOUT });
    expect(await table.getByRole('row', { name: 'unused' }).getByTestId('key-last-used').textContent()).toBe('Never');

    // The permission grid says what each allows.
    await page.getByRole('button', { name: 'New restricted key' }).click();
    const form = page.getByRole('dialog', { name: 'New restricted key' });
    const write = form.getByRole('checkbox', { name: /^refunds:write/ });
    expect(await write.getAttribute('aria-describedby')).toBeTruthy();
    expect(await form.getByText('Refund payments').count()).toBe(1);
    await expectAxeClean(page, 'the new key panel');
    await screenshot(page, 'dashboard-list-new-key-phone-light');
    await page.keyboard.press('Escape');
    await form.waitFor({ state: 'detached', timeout: UI_TIMEOUT });

    const keyState = async () => (await account.api.get('/api_keys')).body.data.find((k: any) => k.id === unused.id).revoked_at;
    const revoke = page.getByRole('button', { name: 'Revoke unused' });
    await revoke.click();
    const dialog = confirmDialog(page, 'Revoke unused?');
    expect(await dialog.textContent()).toContain('fail at once');
    expect(await dialog.getByRole('button', { name: 'Revoke key' }).getAttribute('class')).toBe('destructive');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached', timeout: UI_TIMEOUT });
    await revoke.click();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached', timeout: UI_TIMEOUT });
    expect(await keyState()).toBeNull();
    await revoke.click();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await table.getByRole('row', { name: 'unused' }).getByTestId('key-state').filter({ hasText: /^Revoked / }).waitFor({ timeout: UI_TIMEOUT });
    expect(await keyState()).not.toBeNull();

    await openPage(page, 'Payment links');
    const deactivate = page.getByRole('button', { name: `Deactivate ${link.code}` });
    await deactivate.click({ timeout: UI_TIMEOUT });
    const deactivating = confirmDialog(page, 'Deactivate this payment link?');
    await page.keyboard.press('Escape');
    await deactivating.waitFor({ state: 'detached', timeout: UI_TIMEOUT });
    await deactivate.click();
    await deactivating.getByRole('button', { name: 'Cancel' }).click();
    expect((await account.api.get(`/payment_links/${link.id}`)).body.active).toBe(true);
    await deactivate.click();
    await deactivating.getByRole('button', { name: 'Deactivate link' }).click();
    await page.getByTestId('link-state').filter({ hasText: 'Inactive' }).waitFor({ timeout: UI_TIMEOUT });
    expect((await account.api.get(`/payment_links/${link.id}`)).body.active).toBe(false);
    expect(unexpectedErrors(errors)).toEqual([]);
    await page.close();
  });
});
