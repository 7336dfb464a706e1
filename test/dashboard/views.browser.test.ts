import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAccount, idempotencyKey, type TestAccount } from '../support/accounts';
import { chromiumAvailable, launchPhoneBrowser, warnIfNoChromium, type PhoneBrowser } from '../support/browser';
import { advanceClock, createPayment, expressBody, referenceBody } from '../support/payments';
import { startReceiver, type Receiver } from '../support/receiver';
import { type TestServer } from '../support/server';
import { waitFor } from '../support/wait';
import { createEndpoint } from '../support/webhooks';
import { gqlData } from '../graphql/support';
import { formatAmount, formatMs, formatNumber, formatPercent } from '../../src/dashboard/app/format';
import { statusWords } from '../../src/dashboard/app/components/StatusBadge';
import { methodName } from '../../src/dashboard/app/payments';
import { ensureDashboardBundle, LIVE_TIMEOUT, signInThroughForm, UI_TIMEOUT, unexpectedErrors } from './support/dashboard';
import { LAYOUTS, navLink, useLayout } from './support/product';
import { checkLayout, shownPaymentIds, tableRows, waitForShownPayments } from './support/views';
import { sharedGateway } from '../support/server';

/**
 * Issue 40's views in Chromium against the real gateway: the Overview's charts (each an image with a name,
 * and a table with the server's numbers), the Payments search, filters and paging, and the payment page's
 * Timeline, each at 1280 × 800 and 390 × 844, light and dark, axe-clean and without sideways scrolling.
 */
vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });
warnIfNoChromium('test/dashboard/views.browser.test.ts (Overview, Payments, payment page)');

const OVERVIEW = `query ($range: OverviewRange) { overview(range: $range) {
  range buckets { start count paidVolume byStatus { status count } }
  methods { method count paid failed successRate paidVolume }
  webhooks { deliveries delivered failed pending successRate lagP50Ms lagP95Ms buckets { delivered failed pending lagP50Ms } }
} }`;

describe.skipIf(!chromiumAvailable)('dashboard views in Chromium', () => {
  let server: TestServer;
  let browser: PhoneBrowser;
  let receiver: Receiver;

  beforeAll(async () => {
    await ensureDashboardBundle();
    // 120 payments and the dashboard's own calls are counted on one key: room for them.
    server = await sharedGateway({ RATE_LIMIT_PER_MINUTE: '100000' });
    receiver = await startReceiver();
    browser = await launchPhoneBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await server?.stop();
  });

  /** A value as the Overview writes it: "no data" where there is none, never a zero. */
  const noData = <T,>(value: T | null | undefined, format: (v: T) => string) => (value == null ? 'no data' : format(value));
  const overviewOf = async (acct: TestAccount, range = 'LAST_24_HOURS') => (await gqlData(server.baseUrl, acct.sk, OVERVIEW, { range })).overview;

  it('Overview: empty at first, then each chart an image named with its numbers and a table with the server’s numbers', async () => {
    const acct = await createAccount(server.baseUrl);
    await createEndpoint(acct.api, `${receiver.url}/ok/${acct.id}`);
    const { page, errors } = await browser.newPage();
    await signInThroughForm(page, server.baseUrl, acct.sk);
    expect(page.url()).toBe(`${server.baseUrl}/dashboard`);
    expect(await (await navLink(page, 'Overview')).getAttribute('aria-current')).toBe('page');
    await page.keyboard.press('Escape'); // folds the phone's menu again, if navLink opened it
    await page.getByText('No payments in the last 24 hours').waitFor({ timeout: UI_TIMEOUT });

    // At once: no number below depends on the order they were made in.
    await Promise.all([
      createPayment(acct.api, expressBody('923000000', 5000)),
      createPayment(acct.api, expressBody('923000000', 7250)),
      createPayment(acct.api, expressBody('923000001', 1200)),
      createPayment(acct.api, referenceBody(9000)),
    ]);
    // The page follows the account's events: the charts replace the empty state without a reload.
    await page.getByRole('img', { name: /^Payments by status per hour, last 24 hours: \d+ payments$/ }).waitFor({ timeout: LIVE_TIMEOUT });
    // The express payments' rail (+2 s, +5 s) moved on by the sandbox clock instead of waited for.
    await advanceClock(acct.api, 5);
    // Settled: the express payments final and every event delivered (2 + 2 + 2 + 1 deliveries).
    const o = await waitFor(
      () => overviewOf(acct),
      (v: any) => v.webhooks.delivered === 7 && !v.buckets.some((b: any) => b.byStatus.some((s: any) => s.status === 'PROCESSING' || (s.status === 'PENDING' && s.count > 1))),
      LIVE_TIMEOUT,
    );
    // A delivery is no event: read the page again so it shows the settled numbers.
    await page.reload();

    const sum = (f: (b: any) => number) => o.buckets.reduce((n: number, b: any) => n + f(b), 0);
    const names = {
      'Payments by status': `Payments by status per hour, last 24 hours: ${formatNumber(sum((b) => b.count))} payments`,
      'Paid volume': `Paid volume (AOA) per hour, last 24 hours: ${formatAmount(sum((b) => b.paidVolume))}`,
      'Success rate per method': `Success rate per payment method, last 24 hours: ${o.methods.map((m: any) => `${methodName(m.method)} ${noData(m.successRate, formatPercent)}`).join(', ')}`,
      'Webhook deliveries': `Webhook deliveries per hour, last 24 hours: ${o.webhooks.delivered} delivered, ${o.webhooks.failed} failed, ${o.webhooks.pending} pending; success rate ${formatPercent(o.webhooks.successRate)}`,
      'Webhook lag': `Median webhook lag per hour, last 24 hours: p50 ${formatMs(o.webhooks.lagP50Ms)}, p95 ${formatMs(o.webhooks.lagP95Ms)}`,
    };
    expect(sum((b) => b.count)).toBe(4);
    expect(sum((b) => b.paidVolume)).toBe(12_250);

    // Each chart's table, row by row, as the server's answer says it (the label column aside: its times are the page's read).
    const statusesShown = [...new Set(o.buckets.flatMap((b: any) => b.byStatus.map((s: any) => s.status)))] as string[];
    const statusRow = (b: any) => [...statusesShown.map((s) => formatNumber(b.byStatus.find((c: any) => c.status === s)?.count ?? 0)), formatNumber(b.count)];
    const expected: Record<string, { header: string[]; rows: string[][] }> = {
      'Payments by status': { header: [...statusesShown.map((s) => statusWords(s)), 'Total'], rows: o.buckets.map(statusRow) },
      'Paid volume': { header: ['Paid volume'], rows: o.buckets.map((b: any) => [formatAmount(b.paidVolume)]) },
      'Success rate per method': {
        header: ['Success rate', 'Payments', 'Paid', 'Failed', 'Paid volume'],
        rows: o.methods.map((m: any) => [noData(m.successRate, formatPercent), formatNumber(m.count), formatNumber(m.paid), formatNumber(m.failed), formatAmount(m.paidVolume)]),
      },
      'Webhook deliveries': {
        header: ['Delivered', 'Failed', 'Pending', 'Total'],
        rows: o.webhooks.buckets.map((b: any) => [b.delivered, b.failed, b.pending, b.delivered + b.failed + b.pending].map((n) => formatNumber(n))),
      },
      'Webhook lag': { header: ['Median lag'], rows: o.webhooks.buckets.map((b: any) => [noData(b.lagP50Ms, formatMs)]) },
    };
    // The reference payment is not final: its method has no success rate, and the chart writes so on its band.
    expect(o.methods.some((m: any) => m.successRate == null)).toBe(true);

    for (const layout of LAYOUTS) {
      await useLayout(page, layout);
      for (const [title, name] of Object.entries(names)) {
        const chart = page.getByRole('region', { name: title, exact: true });
        await chart.getByRole('img', { name, exact: true }).waitFor({ timeout: UI_TIMEOUT });
        const toggle = chart.getByRole('button', { name: /table/ });
        if ((await toggle.getAttribute('aria-expanded')) === 'false') await toggle.click();
        expect(await toggle.getAttribute('aria-expanded')).toBe('true');
        const table = chart.getByRole('table');
        const header = (await table.locator('thead th').allTextContents()).slice(1);
        const rows = (await tableRows(table)).map((cells) => cells.slice(1));
        // Status columns follow the stacking order, not the server's: compare them as sets of columns.
        if (title === 'Payments by status') {
          const byHeader = (h: string[], r: string[][]) => Object.fromEntries(h.map((col, i) => [col, r.map((row) => row[i])]));
          expect(byHeader(header, rows)).toEqual(byHeader(expected[title]!.header, expected[title]!.rows));
        } else {
          expect(header, title).toEqual(expected[title]!.header);
          expect(rows, title).toEqual(expected[title]!.rows);
        }
      }
      const methods = page.getByRole('region', { name: 'Success rate per method', exact: true });
      expect(await methods.locator('svg text.chart-no-data').allTextContents()).toEqual(['no data']);
      // The lag chart says what it measures, with the range's numbers.
      const lagNote = page.getByRole('region', { name: 'Webhook lag', exact: true }).locator('.chart-note');
      expect(await lagNote.textContent()).toBe(
        `Lag: the time from an event’s creation to the start of the attempt that delivered it, median per bar (sandbox time). Over the range: median ${formatMs(o.webhooks.lagP50Ms)}, 95 % within ${formatMs(o.webhooks.lagP95Ms)}. No bar: no event of that time was delivered.`,
      );
      const tiles = await page.locator('dl.tiles dd').allTextContents();
      expect(tiles).toEqual([formatNumber(4), formatAmount(12_250), formatPercent(2 / 3), formatPercent(1)]);
      await checkLayout(page, 'overview', layout);
    }

    // The 7-day range: seven daily buckets, and the range in the URL.
    await page.getByRole('button', { name: 'Last 7 days' }).click();
    const days = page.getByRole('region', { name: 'Payments by status', exact: true });
    await days.getByRole('img', { name: 'Payments by status per day, last 7 days: 4 payments', exact: true }).waitFor({ timeout: UI_TIMEOUT });
    expect(page.url()).toBe(`${server.baseUrl}/dashboard?range=7d`);
    // A new range draws new charts, their tables folded again.
    await days.getByRole('button', { name: 'Show as table' }).click();
    expect(await days.getByRole('table').locator('tbody tr').count()).toBe(7);
    expect(unexpectedErrors(errors)).toEqual([]);
    await page.close();
  });

  it('Payments: the search finds a payment by id, merchant_reference, mobile and reference number; ?status=FAILED opens filtered', async () => {
    const acct = await createAccount(server.baseUrl);
    const order = `order-${idempotencyKey()}`;
    const paid = await createPayment(acct.api, expressBody('923000000', 5000, { merchant_reference: order }));
    const failing = await createPayment(acct.api, expressBody('923000001', 1200));
    const reference = await createPayment(acct.api, referenceBody(9000));
    const { page, errors } = await browser.newPage();
    await signInThroughForm(page, server.baseUrl, acct.sk);
    await page.goto(`${server.baseUrl}/dashboard/payments`);
    const search = page.getByRole('searchbox', { name: 'Search' });
    for (const [key, want] of [
      [paid.id, paid],
      [order, paid],
      ['923000001', failing],
      [reference.reference.number, reference],
    ] as const) {
      await search.fill(key);
      await search.press('Enter');
      await waitForShownPayments(page, [want.id]);
      expect(new URL(page.url()).searchParams.get('search')).toBe(key);
    }

    // Its rail's +5 s on the sandbox clock rather than waited for (the search above needed none of it).
    await advanceClock(acct.api, 5);
    await waitFor(
      async () => (await acct.api.get(`/payment_intents/${failing.id}`)).body.status,
      (s) => s === 'FAILED',
      LIVE_TIMEOUT,
    );
    await page.goto(`${server.baseUrl}/dashboard/payments?status=FAILED`);
    await waitForShownPayments(page, [failing.id]);
    expect(await page.getByLabel('Status').inputValue()).toBe('FAILED');
    expect(await page.locator(`tr[data-id="${failing.id}"]`).textContent()).toContain('Rejected by customer');

    await page.goto(`${server.baseUrl}/dashboard/payments`);
    await waitForShownPayments(page, [paid.id, failing.id, reference.id]);
    for (const layout of LAYOUTS) {
      await useLayout(page, layout);
      // Every id on one line (cut with an ellipsis where the column is narrow).
      const lines = await page.locator('table.payments-table tbody th a').evaluateAll((links) =>
        links.map((a) => a.getBoundingClientRect().height / parseFloat(getComputedStyle(a).lineHeight)),
      );
      expect(lines.every((l) => l < 1.5), `ids on one line (${layout.name}): ${lines}`).toBe(true);
      await checkLayout(page, 'payments', layout);
    }
    expect(unexpectedErrors(errors)).toEqual([]);
    await page.close();
  });

  it('Payments: Next reaches the 120th payment of 120, Previous walks back, also from a reloaded URL', async () => {
    const acct = await createAccount(server.baseUrl);
    const made: string[] = [];
    for (let batch = 0; batch < 12; batch++) {
      const ids = await Promise.all(Array.from({ length: 10 }, () => createPayment(acct.api, referenceBody(1000 + batch)).then((p) => p.id as string)));
      made.push(...ids);
    }
    const { page } = await browser.newPage();
    await signInThroughForm(page, server.baseUrl, acct.sk);
    await page.goto(`${server.baseUrl}/dashboard/payments`);
    const table = page.getByRole('table', { name: 'Payments' });
    const pages: string[][] = [];
    for (;;) {
      await table.locator('tbody tr').first().waitFor({ timeout: UI_TIMEOUT });
      const ids = await shownPaymentIds(page);
      pages.push(ids);
      const next = page.getByRole('button', { name: 'Next' });
      if (await next.isDisabled()) break;
      expect(pages.length).toBeLessThan(10);
      await next.click();
      await page.waitForFunction((first) => document.querySelector('table.payments-table tbody tr')?.getAttribute('data-id') !== first, ids[0], { timeout: UI_TIMEOUT });
    }
    expect(pages.map((p) => p.length)).toEqual([50, 50, 20]);
    expect(new Set(pages.flat()).size).toBe(120);
    expect([...pages.flat()].sort()).toEqual([...made].sort());

    // The earlier pages' cursors are in the URL: a reload of the last page can still go back.
    await page.reload();
    await waitForShownPayments(page, pages[2]!);
    await page.getByRole('button', { name: 'Previous' }).click();
    await waitForShownPayments(page, pages[1]!);
    await page.getByRole('button', { name: 'Previous' }).click();
    await waitForShownPayments(page, pages[0]!);
    expect(await page.getByRole('button', { name: 'Previous' }).isDisabled()).toBe(true);
    await page.close();
  });

  it('the payment page: a Timeline of status changes, events and delivery attempts, failed ones with why and the next retry', async () => {
    const acct = await createAccount(server.baseUrl);
    const failingReceiver = await startReceiver();
    failingReceiver.reply = () => ({ status: 500 });
    // A port that was just free: nothing listens there, so the connection is refused.
    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    try {
      await createEndpoint(acct.api, `http://127.0.0.1:${closedPort}/hooks`);
      await createEndpoint(acct.api, `${failingReceiver.url}/hooks`);
      const made = await createPayment(acct.api, expressBody('923000000', 7500));
      // Its rail (+5 s) by the sandbox clock, not waited for: the Timeline is read after it.
      await advanceClock(acct.api, 5);
      const { page, errors } = await browser.newPage();
      await signInThroughForm(page, server.baseUrl, acct.sk);
      await page.goto(`${server.baseUrl}/dashboard/payments/${made.id}`);
      const timeline = page.getByRole('list', { name: 'Timeline' });
      const items = timeline.getByRole('listitem');
      await items.filter({ hasText: 'payment.succeeded' }).filter({ hasText: 'connection refused' }).waitFor({ timeout: LIVE_TIMEOUT });
      await items.filter({ hasText: 'payment.succeeded' }).filter({ hasText: 'HTTP 500' }).waitFor({ timeout: LIVE_TIMEOUT });

      const texts = await items.allTextContents();
      for (const why of ['connection refused', 'HTTP 500']) {
        // Each delivery's latest attempt (an earlier attempt, listed on its own, has no next retry).
        const failed = texts.filter((t) => t.includes(why) && t.includes('Next retry due'));
        // Both events (payment.created, payment.succeeded) to this endpoint, each with its next retry.
        expect(failed.length, why).toBe(2);
        for (const t of failed) expect(t).toMatch(/Attempt \d+ failed: .*Next retry due \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
      }
      // Oldest first: created, its event, the status change and its event; every item has its sandbox time.
      const at = (s: string) => texts.findIndex((t) => t.includes(s));
      expect(at('Created, status')).toBe(0);
      expect(at('Event payment.created')).toBeLessThan(at('Status changed to'));
      expect(at('Status changed to')).toBeLessThan(at('Event payment.succeeded'));
      expect(texts.every((t) => /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/.test(t))).toBe(true);
      const times = await timeline.locator('.story-when time').evaluateAll((els) => els.filter((_e, i) => i % 2 === 0).map((e) => e.getAttribute('datetime') ?? ''));
      expect(times).toEqual([...times].sort());

      // Every attempt, not only each delivery's last: the first retry is due 10 s later on the sandbox
      // clock; once it has failed too, the first attempt keeps its own item.
      await advanceClock(acct.api, 11);
      await page.reload();
      const retried = items.filter({ hasText: 'payment.succeeded' }).filter({ hasText: 'HTTP 500' });
      await retried.filter({ hasText: /Attempt 2 failed: HTTP 500/ }).waitFor({ timeout: LIVE_TIMEOUT });
      expect(await retried.filter({ hasText: /attempt 1 failed: HTTP 500\./ }).count()).toBe(1);

      for (const layout of LAYOUTS) {
        await useLayout(page, layout);
        await checkLayout(page, 'payment', layout);
      }
      expect(unexpectedErrors(errors)).toEqual([]);
      await page.close();
    } finally {
      await failingReceiver.close();
    }
  });
});
