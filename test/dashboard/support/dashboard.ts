import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { PHONE_VIEWPORT } from '../../support/browser';

/**
 * Helpers of the dashboard app's browser tests: the bundle built when missing or stale (a developer may
 * run vitest without `npm run build`), signing in through the form, and axe-core's verdict on a page.
 */
export async function ensureDashboardBundle(): Promise<void> {
  // build.mjs is plain JavaScript; its "dashboard" target is what `npm run build` makes for /dashboard.
  const { buildTargets } = (await import('../../../build.mjs')) as { buildTargets: (names: string[], opts: { ifStale: boolean }) => Promise<string[]> };
  await buildTargets(['dashboard'], { ifStale: true });
}

/** Generous: the machine is shared and loaded; these bound a hang, they are not timing assertions. */
export const UI_TIMEOUT = 20_000;
export const LIVE_TIMEOUT = 30_000;

/** Signs in through the form; the browser's profile is shared by the tests, so another test's session cookie goes first. */
export async function signInThroughForm(page: Page, baseUrl: string, key: string): Promise<void> {
  await signInThroughFormAt(page, `${baseUrl}/dashboard`, key);
}

/**
 * Signs in through the form at `url`, any address of the dashboard: signed out, every address shows the
 * form, and once signed in the same address shows its page. One page load where signing in and then
 * opening the address takes two.
 */
export async function signInThroughFormAt(page: Page, url: string, key: string): Promise<void> {
  await page.context().clearCookies();
  await page.goto(url);
  await page.getByLabel('Secret key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation').waitFor({ timeout: UI_TIMEOUT });
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core'), 'utf8');

/**
 * axe-core's serious and critical violations on the page as it is now. axe is evaluated through the
 * DevTools protocol rather than added as a <script> tag (page.addScriptTag): the dashboard's CSP allows
 * no inline script, and the tests keep that CSP in force rather than bypassing it.
 */
export async function seriousAxeViolations(page: Page): Promise<string[]> {
  // Once per document: the dashboard is one page whose views change without a navigation, and compiling
  // axe's ~550 kB again for each of a test's dozens of checks was a second of CPU each.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v: any) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n: any) => n.target.join(' ')) }));
  });
  return violations
    .filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
    .map((v: any) => `${v.impact} ${v.id}: ${v.help} (${v.targets.slice(0, 5).join(', ')})`);
}

export async function expectAxeClean(page: Page, where: string): Promise<void> {
  expect(await seriousAxeViolations(page), `axe on ${where}`).toEqual([]);
}

/** Errors from the console other than the expected 401s (the session probe before sign-in, a wrong key). */
export function unexpectedErrors(errors: string[]): string[] {
  return errors.filter((e) => !/status of 401 \(Unauthorized\)/.test(e));
}

/**
 * True when the page's layout is no wider than the phone's 390 px. (A mobile browser widens its layout
 * viewport to overflowing content, so window.innerWidth grows with it: compare with the device width.)
 */
export async function fitsPhoneWidth(page: Page): Promise<boolean> {
  return (await page.evaluate(() => document.documentElement.scrollWidth)) <= PHONE_VIEWPORT.width;
}

/** Records, in page memory, each text the element matching `selector` shows from now on; read back with `recordedTexts`. */
export async function recordTexts(page: Page, selector: string): Promise<void> {
  await page.evaluate((selector) => {
    const seen: string[] = [];
    (window as any).__recordedTexts = seen;
    const read = () => {
      const text = document.querySelector(selector)?.textContent?.trim() ?? '';
      if (text && seen[seen.length - 1] !== text) seen.push(text);
    };
    read();
    new MutationObserver(read).observe(document.body, { childList: true, subtree: true, characterData: true });
  }, selector);
}

export const recordedTexts = (page: Page): Promise<string[]> => page.evaluate(() => (window as any).__recordedTexts ?? []);

/** The Payments table's row of one payment. */
export const paymentRow = (page: Page, id: string) => page.getByRole('table', { name: 'Payments' }).getByRole('row').filter({ hasText: id });

/** Waits until that row shows `status` (live: no reload). The badge says it in words; its data-status holds the code. */
export const waitForRowStatus = (page: Page, id: string, status: string) =>
  paymentRow(page, id).locator(`.badge[data-status="${status}"]`).first().waitFor({ timeout: LIVE_TIMEOUT });

/** Signs in on the Payments page (one load: signed out, it shows the form), its table shown. */
export async function signInToPayments(page: Page, baseUrl: string, key: string): Promise<void> {
  await signInThroughFormAt(page, `${baseUrl}/dashboard/payments`, key);
  await paymentsTable(page).waitFor({ timeout: UI_TIMEOUT });
}

const paymentsTable = (page: Page) => page.getByRole('table', { name: 'Payments' });
