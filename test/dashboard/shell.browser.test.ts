import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAccount } from '../support/accounts';
import { ApiClient } from '../support/client';
import { startTestServer, type TestServer } from '../support/server';
import { RateLimitModel } from '../../src/domain/ratelimit/rateLimitModel';
import { hashSecret } from '../../src/domain/accounts/secrets';
import { SESSION_COOKIE } from '../../src/http/sessionCookie';
import { chromiumAvailable, launchPhoneBrowser, warnIfNoChromium, type PhoneBrowser } from '../support/browser';
import { ensureDashboardBundle, signInThroughForm, UI_TIMEOUT, unexpectedErrors } from './support/dashboard';
import { checkPage, LAYOUTS, useLayout } from './support/product';

/**
 * Issue 58, the shell's part: the root page for people, the sign-in page's "create a sandbox account",
 * and a dashboard over its own request budget (DASHBOARD_RATE_LIMIT_PER_MINUTE, set low here) saying
 * so in words instead of showing an empty list. Real gateway, real Chromium, at 390 and 1280 px, light
 * and dark, axe-clean.
 */
vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });
warnIfNoChromium('test/dashboard/shell.browser.test.ts (root page, create account, rate-limited dashboard)');

/** Low enough for a test to spend at once, high enough that signing in and one view never reach it. */
const SESSION_BUDGET = 40;

describe.skipIf(!chromiumAvailable)('the shell in Chromium', () => {
  let server: TestServer;
  let browser: PhoneBrowser;

  beforeAll(async () => {
    await ensureDashboardBundle();
    server = await startTestServer({ DASHBOARD_RATE_LIMIT_PER_MINUTE: String(SESSION_BUDGET) });
    browser = await launchPhoneBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('the root page points a person at the dashboard, the docs and GraphQL', async () => {
    const { page, errors } = await browser.newPage();
    await page.context().clearCookies();
    const res = await page.goto(`${server.baseUrl}/`);
    expect(res?.status()).toBe(200);
    await page.getByRole('heading', { level: 1, name: 'Payment gateway sandbox' }).waitFor({ timeout: UI_TIMEOUT });
    const links = page.getByRole('navigation', { name: 'Where to go' }).getByRole('link');
    expect(await links.allTextContents()).toEqual(['Open the dashboard', 'API reference (REST)', 'GraphQL explorer (GraphiQL)', 'The contract (openapi.yaml)']);
    for (const layout of LAYOUTS) {
      await useLayout(page, layout);
      await checkPage(page, 'Root page', layout);
    }
    await page.getByRole('link', { name: 'Open the dashboard' }).click();
    await page.getByLabel('Secret key').waitFor({ timeout: UI_TIMEOUT });
    expect(page.url()).toBe(`${server.baseUrl}/dashboard`);
    expect(errors.filter((e) => /Content Security Policy|Refused to/i.test(e))).toEqual([]);
    await page.close();
  });

  it('sign-in creates a sandbox account, shows its secret key once with a copy button, and signs in with it', async () => {
    const { page, errors } = await browser.newPage();
    await page.context().clearCookies();
    await page.goto(`${server.baseUrl}/dashboard`);
    await page.getByRole('button', { name: 'Create a sandbox account' }).click();
    await page.getByLabel('Account name (optional)').fill('Loja Nova');
    for (const layout of LAYOUTS) {
      await useLayout(page, layout);
      await checkPage(page, 'Create account', layout);
    }
    await page.getByRole('button', { name: 'Create account' }).click();
    const ready = page.getByRole('region', { name: 'Your sandbox account is ready' });
    await ready.waitFor({ timeout: UI_TIMEOUT });
    const secret = (await ready.locator('code').textContent())!;
    expect(secret).toMatch(/^sk_test_[A-Za-z0-9]{32}$/);
    expect(await ready.getByRole('button', { name: 'Copy secret key' }).isVisible()).toBe(true);
    expect(await ready.textContent()).toContain('Secret key, shown only now.');
    for (const layout of LAYOUTS) {
      await useLayout(page, layout);
      await checkPage(page, 'New account key', layout);
    }
    // The key works for the API: the account is the one named.
    const account = await new ApiClient(server.baseUrl, secret).get('/account');
    expect(account.status, account.text).toBe(200);
    expect(account.body.name).toBe('Loja Nova');

    await ready.getByRole('button', { name: 'I have copied it: open the dashboard' }).click();
    await page.getByRole('navigation').first().waitFor({ timeout: UI_TIMEOUT });
    expect(await page.locator('header .brand').textContent()).toContain('Loja Nova');
    // Shown once: gone from the page once signed in.
    expect(await page.content()).not.toContain(secret);
    expect(unexpectedErrors(errors)).toEqual([]);
    await page.close();
  });

  it('over its own budget the dashboard says so in words and shows no empty state', async () => {
    const acct = await createAccount(server.baseUrl);
    const { page } = await browser.newPage();
    // The page's own clock, moved on below rather than waited for (it ticks as usual meanwhile).
    await page.clock.install();
    await signInThroughForm(page, server.baseUrl, acct.sk);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor({ timeout: UI_TIMEOUT });
    // Spend the session's budget from the page itself (its cookie), as a busy dashboard would.
    const statuses = await page.evaluate(async (n) => {
      const one = () => fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ account { id } }' }) }).then((r) => r.status);
      return Promise.all(Array.from({ length: n }, one));
    }, SESSION_BUDGET);
    expect(statuses).toContain(429);
    await page.reload();

    const alert = page.getByRole('alert').filter({ hasText: 'too many requests' });
    await alert.first().waitFor({ timeout: UI_TIMEOUT });
    expect(await alert.first().textContent()).toMatch(/^The dashboard is making too many requests; it will try again in \d+ s\.$/);
    // Its refused subscriptions are not live: the header does not say "Live".
    await page.locator('p.live[data-state="none"]').waitFor({ state: 'attached', timeout: UI_TIMEOUT });
    for (const layout of LAYOUTS) {
      await useLayout(page, layout);
      // Never an empty state beside it ("No payments in the last 24 hours"), never the code.
      expect(await page.locator('.empty-state').count()).toBe(0);
      expect(await page.locator('main').textContent()).not.toMatch(/rate_limit_exceeded|No payments/);
      await checkPage(page, 'Rate limited', layout);
    }
    // Once the window reopens (Retry-After, under a minute), the load is tried again by itself: the
    // Overview appears (a new account has no payments) without a reload. Not waited for in real time:
    // the session's window (its bucket in rate_limits, named by the stored hash of the HttpOnly cookie's
    // value) is ended in the store, then the page's clock passes the Retry-After it was told, which
    // fires its retry.
    const cookie = (await page.context().cookies()).find((c) => c.name === SESSION_COOKIE);
    expect(cookie?.value).toBeTruthy();
    const ended = await RateLimitModel.updateOne(
      { _id: `session:${hashSecret(cookie!.value)}` },
      { $set: { window_end: new Date(0), window_mono_end: Number.MIN_SAFE_INTEGER } },
    );
    expect(ended.modifiedCount).toBe(1);
    expect(await page.getByText('No payments in the last 24 hours').count()).toBe(0);
    await page.clock.fastForward(61_000);
    await page.getByText('No payments in the last 24 hours').waitFor({ timeout: UI_TIMEOUT });
    // The key's own API budget was not spent by any of it.
    const api = await acct.api.get('/account');
    expect(api.headers.get('x-ratelimit-remaining')).toBe(String(server.config.rateLimitPerMinute - 1));
    await page.close();
  });
});
