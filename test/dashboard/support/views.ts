import type { Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import { screenshot } from '../../support/browser';
import { expectAxeClean, UI_TIMEOUT } from './dashboard';
import type { Layout } from './product';

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

/**
 * In this layout: no sideways scroll (against the layout's width: a mobile browser widens its window to
 * overflowing content, so window.innerWidth would grow with it), axe clean (serious, critical), and a
 * screenshot, taken first so that a failure can be looked at.
 */
export async function checkLayout(page: Page, view: string, layout: Layout): Promise<void> {
  const { width } = layout.viewport;
  await screenshot(page, `views-${view}-${layout.name}`);
  if (!(await fitsWidth(page, width))) expect.fail(`${view} is wider than ${width} px (${layout.name}): ${(await stickingOut(page, width)).join(', ')}`);
  await expectAxeClean(page, `${view} (${layout.name})`);
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
