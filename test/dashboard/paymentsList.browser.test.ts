import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAccount, type TestAccount } from '../support/accounts';
import { chromiumAvailable, launchPhoneBrowser, screenshot, warnIfNoChromium, type PhoneBrowser } from '../support/browser';
import { advanceClock, createPayment, createPaymentsAtOnce, expressBody, referenceBody } from '../support/payments';
import { sharedGateway, type TestServer } from '../support/server';
import { waitFor } from '../support/wait';
import { ensureDashboardBundle, LIVE_TIMEOUT, paymentRow, signInThroughFormAt, UI_TIMEOUT, unexpectedErrors } from './support/dashboard';
import { checkPage, confirmDialog, LAYOUTS, useLayout, type Layout } from './support/product';

/**
 * Issue 58 on the Payments list and the payment page (contract decisions, "Sandbox dashboard: a data
 * product"): the rows fill the first screen, the filters and the open payment live in the URL, a row
 * opens a pane beside the list (the page on a phone), the search finds prefixes and ignores the merchant
 * reference's case, refund and cancel ask first, and a failed read never reads as an empty list. Real
 * gateway, real Chromium, a fresh account per test.
 */
vi.setConfig({ testTimeout: 240_000, hookTimeout: 120_000 });
warnIfNoChromium('test/dashboard/paymentsList.browser.test.ts (Payments list and payment page)');

const DESKTOP = LAYOUTS.find((l) => l.name === 'desktop-light')!;
const PHONE = LAYOUTS.find((l) => l.name === 'phone-light')!;

describe.skipIf(!chromiumAvailable)('the Payments list and the payment page in Chromium', () => {
  let server: TestServer;
  let browser: PhoneBrowser;

  beforeAll(async () => {
    await ensureDashboardBundle();
    // Dozens of payments and the dashboard's own calls on one key: room for them.
    server = await sharedGateway({ RATE_LIMIT_PER_MINUTE: '100000' });
    browser = await launchPhoneBrowser();
  });

  afterAll(async () => {
    await browser?.close();
  });

  /** A new page signed in at `path` (of the dashboard), in `layout`: the form there, then that page. */
  const signedIn = async (account: TestAccount, path: string, layout?: Layout) => {
    const { page, errors } = await browser.newPage();
    if (layout) await useLayout(page, layout);
    await signInThroughFormAt(page, `${server.baseUrl}/dashboard${path}`, account.sk);
    return { page, errors };
  };
  const table = (page: Page) => page.getByRole('table', { name: 'Payments' });
  const rows = (page: Page) => table(page).locator('tbody tr');
  const url = (page: Page) => new URL(page.url());

  /** The rows wholly inside the window, as the first screen shows them (no scroll). */
  const rowsOnFirstScreen = (page: Page) =>
    rows(page).evaluateAll((trs) =>
      trs.filter((tr) => {
        const box = tr.getBoundingClientRect();
        return box.top >= 0 && box.bottom <= window.innerHeight && box.height > 0;
      }).length,
    );

  it('the first screen shows at least 10 rows at 1280 × 800 and 4 at 390 × 844, light and dark; one page has no pager', async () => {
    const account = await createAccount(server.baseUrl);
    await createPaymentsAtOnce(account.api, 24);
    // Each layout opens the page afresh; the first signs in there.
    const { page, errors } = await signedIn(account, '/payments', LAYOUTS[0]);
    for (const layout of LAYOUTS) {
      if (layout !== LAYOUTS[0]) {
        await useLayout(page, layout);
        await page.goto(`${server.baseUrl}/dashboard/payments`);
      }
      await rows(page).nth(23).waitFor({ timeout: UI_TIMEOUT });
      await page.evaluate(() => window.scrollTo(0, 0));
      const least = layout.viewport.width >= 1280 ? 10 : 4;
      expect(await rowsOnFirstScreen(page), layout.name).toBeGreaterThanOrEqual(least);
      // Creating is a button, not a form above the rows; 24 payments are one page, so no pager.
      expect(await page.getByRole('button', { name: 'New test payment' }).count()).toBe(1);
      expect(await page.getByLabel('Scenario').count()).toBe(0);
      expect(await page.getByRole('group', { name: 'Pages of payments' }).count()).toBe(0);
      // The clock is not named on every row.
      expect(await table(page).locator('tbody .clock-label:visible').count()).toBe(0);
      await checkPage(page, 'payments-list', layout);
    }
    expect(unexpectedErrors(errors)).toEqual([]);
    await page.close();
  });

  it('a row opens a pane beside the list with Enter; filters and the open payment survive a reload, Back closes it, the scroll stays', async () => {
    const account = await createAccount(server.baseUrl);
    const [reference] = await Promise.all([createPayment(account.api, referenceBody(3_000)), createPaymentsAtOnce(account.api, 30)]);
    const { page, errors } = await signedIn(account, '/payments', DESKTOP);
    await rows(page).nth(30).waitFor({ timeout: UI_TIMEOUT });

    // A filter is in the URL.
    await page.getByText('Filters', { exact: true }).click();
    await page.getByLabel('Method').selectOption('MULTICAIXA_EXPRESS');
    await waitFor(() => Promise.resolve(url(page).searchParams.get('method')), (s) => s === 'MULTICAIXA_EXPRESS', UI_TIMEOUT);
    await paymentRow(page, reference.id).waitFor({ state: 'detached', timeout: UI_TIMEOUT });

    // Scrolled down, a row is opened from the keyboard: its link takes focus, Enter opens the pane.
    await page.evaluate(() => window.scrollTo(0, 300));
    const scrolled = await page.evaluate(() => window.scrollY);
    expect(scrolled).toBeGreaterThan(0);
    const target = await rows(page).nth(12).getAttribute('data-id');
    const link = rows(page).nth(12).getByRole('link', { name: target! });
    await link.focus();
    await page.keyboard.press('Enter');
    const pane = page.getByRole('dialog', { name: 'Payment' });
    await pane.getByTestId('payment-status').waitFor({ timeout: UI_TIMEOUT });
    expect(await pane.textContent()).toContain(target);
    expect(url(page).searchParams.get('selected')).toBe(target);
    expect(url(page).searchParams.get('method')).toBe('MULTICAIXA_EXPRESS');
    expect(await pane.getByRole('link', { name: 'Open full page' }).getAttribute('href')).toBe(`/dashboard/payments/${target}`);
    expect(await page.evaluate(() => window.scrollY)).toBe(scrolled);
    await checkPage(page, 'payments-pane', DESKTOP);
    await useLayout(page, LAYOUTS.find((l) => l.name === 'desktop-dark')!);
    await checkPage(page, 'payments-pane', LAYOUTS.find((l) => l.name === 'desktop-dark')!);

    // A reload keeps both.
    await page.reload();
    await pane.getByTestId('payment-status').waitFor({ timeout: UI_TIMEOUT });
    expect(await page.getByLabel('Method').inputValue()).toBe('MULTICAIXA_EXPRESS');

    // Back closes the pane and keeps the filter; Close (or Escape) does too.
    await page.goBack();
    await pane.waitFor({ state: 'detached', timeout: UI_TIMEOUT });
    expect(url(page).searchParams.get('method')).toBe('MULTICAIXA_EXPRESS');
    expect(url(page).searchParams.get('selected')).toBeNull();
    await rows(page).first().click();
    await pane.waitFor({ timeout: UI_TIMEOUT });
    await page.keyboard.press('Escape');
    await pane.waitFor({ state: 'detached', timeout: UI_TIMEOUT });
    expect(url(page).search).toBe('?method=MULTICAIXA_EXPRESS');

    // On a phone a row opens the payment's page, and Back comes back to the filtered list where it was.
    await useLayout(page, PHONE);
    await page.evaluate(() => window.scrollTo(0, 600));
    const phoneScroll = await page.evaluate(() => window.scrollY);
    expect(phoneScroll).toBeGreaterThan(0);
    // Dispatched, not clicked: playwright would first scroll the row into view, and the scroll is what is checked.
    await rows(page).nth(15).getByRole('link').dispatchEvent('click');
    await page.getByRole('heading', { level: 1, name: /^Payment pay_/ }).waitFor({ timeout: UI_TIMEOUT });
    await page.goBack();
    await rows(page).first().waitFor({ timeout: UI_TIMEOUT });
    expect(url(page).search).toBe('?method=MULTICAIXA_EXPRESS');
    await page.waitForFunction((y) => window.scrollY === y, phoneScroll, { timeout: UI_TIMEOUT });
    expect(unexpectedErrors(errors)).toEqual([]);
    await page.close();
  });

  it('search finds a prefix of an id and of a reference number, and a merchant reference in any case', async () => {
    const account = await createAccount(server.baseUrl);
    const [express, reference, other] = await Promise.all([
      createPayment(account.api, expressBody('923000000', 4_000, { merchant_reference: 'Loja-ABC-17' })),
      createPayment(account.api, referenceBody(6_000)),
      createPayment(account.api, expressBody('923000000', 8_000)),
    ]);
    const { page, errors } = await signedIn(account, '/payments', DESKTOP);
    await rows(page).nth(2).waitFor({ timeout: UI_TIMEOUT });
    expect(await page.locator('#payment-search-hint').textContent()).toContain('3 characters');

    const search = async (term: string, expected: string[]) => {
      await page.getByRole('searchbox', { name: 'Search' }).fill(term);
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await waitFor(() => Promise.resolve(url(page).searchParams.get('search')), (s) => s === term, UI_TIMEOUT);
      await waitFor(() => rows(page).evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-id'))), (ids) => JSON.stringify(ids) === JSON.stringify(expected), UI_TIMEOUT);
    };
    await search(express.id.slice(0, 10), [express.id]);
    await search(reference.reference.number.slice(0, 4), [reference.id]);
    await search('loja-abc-17', [express.id]);
    await search('LOJA-ABC-17', [express.id]);
    // A search that finds nothing says so and offers the whole list; a reload keeps the search.
    await search('no-such-order', []);
    await page.getByText('No payment matches').waitFor({ timeout: UI_TIMEOUT });
    await page.reload();
    await page.getByText('No payment matches').waitFor({ timeout: UI_TIMEOUT });
    expect(await page.getByRole('searchbox', { name: 'Search' }).inputValue()).toBe('no-such-order');
    await page.getByRole('link', { name: 'Show all payments' }).click();
    await paymentRow(page, other.id).waitFor({ timeout: UI_TIMEOUT });
    expect(unexpectedErrors(errors)).toEqual([]);
    await page.close();
  });

  it('a refused read shows its error and no empty state', async () => {
    const account = await createAccount(server.baseUrl);
    await createPayment(account.api, expressBody('923000000', 4_000));
    // A search longer than the server takes is refused (invalid_request).
    const { page } = await signedIn(account, `/payments?search=${'x'.repeat(200)}`, DESKTOP);
    await page.getByRole('alert').waitFor({ timeout: UI_TIMEOUT });
    // In words, with the field's label on screen: no error code, no argument name.
    expect(await page.getByRole('alert').textContent()).toBe('“Search”: at most 128 characters.');
    expect(await page.getByText(/No payments? (yet|matches)/).count()).toBe(0);
    expect(await table(page).count()).toBe(0);
    await page.close();
  });

  it('Refund asks with the amount in kwanza: Cancel and Escape change nothing, confirming refunds', async () => {
    const account = await createAccount(server.baseUrl);
    const paid = await createPayment(account.api, expressBody('923000000', 2_000));
    // The rail's +5 s on the sandbox clock: what is proven is the refund, not the rail's timing.
    await advanceClock(account.api, 5);
    expect((await account.api.get(`/payment_intents/${paid.id}`)).body.status).toBe('SUCCEEDED');
    const { page, errors } = await signedIn(account, `/payments/${paid.id}`, DESKTOP);
    const refund = page.getByRole('button', { name: 'Refund…' });
    await refund.click({ timeout: UI_TIMEOUT });
    const dialog = confirmDialog(page, 'Refund 2 000 Kz of 2 000 Kz?');
    await dialog.waitFor({ timeout: UI_TIMEOUT });
    await dialog.getByLabel('Amount to refund (Kz)').fill('1500');
    await confirmDialog(page, 'Refund 1 500 Kz of 2 000 Kz?').waitFor({ timeout: UI_TIMEOUT });
    expect(await page.getByRole('button', { name: 'Refund', exact: true }).getAttribute('class')).toBe('destructive');
    await checkPage(page, 'payment-refund-dialog', DESKTOP);
    await page.getByRole('alertdialog').getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('alertdialog').waitFor({ state: 'detached', timeout: UI_TIMEOUT });
    await refund.click();
    await page.getByRole('alertdialog').waitFor({ timeout: UI_TIMEOUT });
    await page.keyboard.press('Escape');
    await page.getByRole('alertdialog').waitFor({ state: 'detached', timeout: UI_TIMEOUT });
    expect((await account.api.get(`/payment_intents/${paid.id}`)).body).toMatchObject({ status: 'SUCCEEDED', amount_refunded: 0 });

    // An amount above what is left is refused in words, in the dialog, before anything is sent.
    await refund.click();
    await page.getByRole('alertdialog').getByLabel('Amount to refund (Kz)').fill('2500');
    await page.getByRole('alertdialog').getByRole('button', { name: 'Refund', exact: true }).click();
    // The amount's digits are grouped with a no-break space.
    const refused = await page.getByRole('alertdialog').getByRole('alert').textContent();
    expect(refused?.replace(/\s/g, ' ')).toBe('Enter an amount to refund between 1 and 2 000 Kz, in whole kwanza.');
    await page.getByRole('alertdialog').getByLabel('Amount to refund (Kz)').fill('1500');
    await page.getByRole('alertdialog').getByRole('button', { name: 'Refund', exact: true }).click();
    // The dialog closes once the refund is made; it completes ~3 s later, moved on by the sandbox clock,
    // and the open page shows that by itself (live, no reload).
    await page.getByRole('alertdialog').waitFor({ state: 'detached', timeout: UI_TIMEOUT });
    await advanceClock(account.api, 3);
    await page.getByTestId('payment-status').locator('[data-status="PARTIALLY_REFUNDED"]').waitFor({ timeout: LIVE_TIMEOUT });
    expect((await account.api.get(`/payment_intents/${paid.id}`)).body.amount_refunded).toBe(1500);
    expect(unexpectedErrors(errors)).toEqual([]);
    await page.close();
  });

  it('Cancel is destructive and asks first; a cancelled reference says when it was cancelled, not when it expires', async () => {
    const account = await createAccount(server.baseUrl);
    const made = await createPayment(account.api, referenceBody(5_000));
    // Days ahead: a PENDING reference would say "expires in …", which a cancelled one must not.
    await advanceClock(account.api, 60);
    // Each layout opens the page afresh; the first signs in there.
    const { page, errors } = await signedIn(account, `/payments/${made.id}`, DESKTOP);
    for (const layout of [DESKTOP, PHONE]) {
      if (layout !== DESKTOP) {
        await useLayout(page, layout);
        await page.goto(`${server.baseUrl}/dashboard/payments/${made.id}`);
      }
      const cancel = page.getByRole('button', { name: 'Cancel payment' });
      await cancel.waitFor({ timeout: UI_TIMEOUT });
      expect(await cancel.getAttribute('class')).toBe('danger');
      expect(await page.getByText(/^Expires /).count()).toBe(1);
      await cancel.click();
      const dialog = confirmDialog(page, 'Cancel this payment?');
      await dialog.waitFor({ timeout: UI_TIMEOUT });
      expect(await dialog.textContent()).toContain('cannot be undone');
      await checkPage(page, 'payment-cancel-dialog', layout);
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached', timeout: UI_TIMEOUT });
      expect((await account.api.get(`/payment_intents/${made.id}`)).body.status).toBe('PENDING');
    }
    await page.getByRole('button', { name: 'Cancel payment' }).click();
    await confirmDialog(page, 'Cancel this payment?').getByRole('button', { name: 'Cancel payment' }).click();
    await page.getByTestId('payment-status').locator('[data-status="CANCELLED"]').waitFor({ timeout: LIVE_TIMEOUT });
    expect((await account.api.get(`/payment_intents/${made.id}`)).body.status).toBe('CANCELLED');
    await page.getByTestId('reference-end').waitFor({ timeout: UI_TIMEOUT });
    expect(await page.getByTestId('reference-end').textContent()).toMatch(/^Cancelled at .*it can no longer be paid\.$/);
    expect(await page.getByText(/^Expires /).count()).toBe(0);
    await screenshot(page, 'dashboard-payment-cancelled');
    expect(unexpectedErrors(errors)).toEqual([]);
    await page.close();
  });
});
