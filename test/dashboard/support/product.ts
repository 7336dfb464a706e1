import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { screenshot } from '../../support/browser';
import { expectAxeClean, UI_TIMEOUT } from './dashboard';

/**
 * Helpers of the dashboard's product tests (test/dashboard/product.browser.test.ts): the four ways a page
 * is looked at (phone and desktop, light and dark), the navigation whichever form it takes, and the
 * checks each page passes in each of them.
 */
export interface Layout {
  name: string;
  viewport: { width: number; height: number };
  colorScheme: 'light' | 'dark';
}

export const LAYOUTS: Layout[] = [
  { name: 'phone-light', viewport: { width: 390, height: 844 }, colorScheme: 'light' },
  { name: 'phone-dark', viewport: { width: 390, height: 844 }, colorScheme: 'dark' },
  { name: 'desktop-light', viewport: { width: 1280, height: 800 }, colorScheme: 'light' },
  { name: 'desktop-dark', viewport: { width: 1280, height: 800 }, colorScheme: 'dark' },
];

export async function useLayout(page: Page, layout: Layout): Promise<void> {
  await page.setViewportSize(layout.viewport);
  await page.emulateMedia({ colorScheme: layout.colorScheme });
}

/** The navigation's link, after opening the Menu when the links are folded behind it (narrow screens). */
export async function navLink(page: Page, name: string) {
  const nav = page.getByRole('navigation', { name: 'Dashboard' });
  const menu = nav.getByRole('button', { name: 'Menu' });
  if ((await menu.isVisible()) && (await menu.getAttribute('aria-expanded')) !== 'true') await menu.click();
  return nav.getByRole('link', { name, exact: true });
}

/** Opens a page through the navigation and waits for its heading (which takes focus). */
export async function openPage(page: Page, name: string): Promise<void> {
  await (await navLink(page, name)).click();
  await page.getByRole('heading', { level: 1, name }).waitFor({ timeout: UI_TIMEOUT });
}

/** Nothing scrolls sideways: the layout is no wider than the window (whatever the window is). */
export async function fitsWindow(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
}

/** The checks every page passes in every layout, and its screenshot. */
export async function checkPage(page: Page, view: string, layout: Layout): Promise<void> {
  const where = `${view} (${layout.name})`;
  expect(await fitsWindow(page), `${where} scrolls sideways`).toBe(true);
  await expectAxeClean(page, where);
  await screenshot(page, `dashboard-${view.toLowerCase().replace(/ /g, '-')}-${layout.name}`);
}

/** The open confirmation dialog (an alertdialog named by its question). */
export const confirmDialog = (page: Page, name: string | RegExp) => page.getByRole('alertdialog', { name });
