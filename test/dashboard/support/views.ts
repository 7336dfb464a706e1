import type { Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import { screenshot } from '../../support/browser';
import { expectAxeClean, UI_TIMEOUT } from './dashboard';

/**
 * The looks the Overview, Payments and payment page are checked in: a desk's screen and a phone, each in
 * the light and the dark scheme (prefers-color-scheme, which the app's palette follows).
 */
export const LOOKS = [
  { size: 'desk', width: 1280, height: 800, scheme: 'light' },
  { size: 'desk', width: 1280, height: 800, scheme: 'dark' },
  { size: 'phone', width: 390, height: 844, scheme: 'light' },
  { size: 'phone', width: 390, height: 844, scheme: 'dark' },
] as const;
export type Look = (typeof LOOKS)[number];

export async function applyLook(page: Page, look: Look): Promise<void> {
  await page.setViewportSize({ width: look.width, height: look.height });
  await page.emulateMedia({ colorScheme: look.scheme });
}

/** True when nothing on the page sticks out past the viewport's width (no sideways scrolling). */
export async function fitsWidth(page: Page, width: number): Promise<boolean> {
  return (await page.evaluate(() => document.documentElement.scrollWidth)) <= width;
}

/** The elements whose right edge is past `width` (a few, as tag.class), to say what made the page scroll sideways. */
async function stickingOut(page: Page, width: number): Promise<string[]> {
  return page.evaluate(
    (width) =>
      Array.from(document.querySelectorAll('body *'))
        .filter((e) => e.getBoundingClientRect().right > width + 0.5)
        .slice(-5)
        .map((e) => `${e.tagName.toLowerCase()}.${e.className} (${Math.round(e.getBoundingClientRect().right)} px)`),
    width,
  );
}

/** In this look: no sideways scroll, axe clean (serious, critical), and a screenshot named by view and look. */
export async function checkLook(page: Page, view: string, look: Look): Promise<void> {
  await screenshot(page, `views-${view}-${look.size}-${look.scheme}`);
  if (!(await fitsWidth(page, look.width))) expect.fail(`${view} is wider than ${look.width} px (${look.scheme}): ${(await stickingOut(page, look.width)).join(', ')}`);
  await expectAxeClean(page, `${view} at ${look.width} px, ${look.scheme}`);
}

/** A table's body as text: one array of cell texts (header cell first) per row. */
export async function tableRows(table: Locator): Promise<string[][]> {
  return table.locator('tbody tr').evaluateAll((rows) => rows.map((tr) => Array.from(tr.children, (c) => (c.textContent ?? '').trim())));
}

/** The data-id of every row the Payments table shows now. */
export async function shownPaymentIds(page: Page): Promise<string[]> {
  return page.getByRole('table', { name: 'Payments' }).locator('tbody tr').evaluateAll((rows) => rows.map((tr) => tr.getAttribute('data-id') ?? ''));
}

/** Waits until the Payments table shows exactly these ids (in any order). */
export async function waitForShownPayments(page: Page, ids: string[]): Promise<void> {
  const want = [...ids].sort().join(',');
  await page.waitForFunction(
    (want) =>
      Array.from(document.querySelectorAll('table.payments-table tbody tr'), (tr) => tr.getAttribute('data-id'))
        .sort()
        .join(',') === want,
    want,
    { timeout: UI_TIMEOUT },
  );
}
