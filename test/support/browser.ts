import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/**
 * Headless Chromium for the page tests: the Debian package at /usr/bin/chromium (never a downloaded
 * browser: the machines are offline), driven by playwright-core, with a fresh profile directory per
 * launch and a phone-sized viewport.
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const chromiumAvailable = existsSync(CHROMIUM_PATH);

export const PHONE_VIEWPORT = { width: 390, height: 844 };
export const SCREENSHOT_DIR = path.resolve('test-artifacts/screenshots');

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Says loudly, once per file, that the browser tests were skipped and why. Returns true when skipping. */
export function warnIfNoChromium(suite: string): boolean {
  if (chromiumAvailable) return false;
  const line = '!'.repeat(100);
  console.warn(
    [
      '',
      line,
      `!!  BROWSER TESTS SKIPPED: ${suite}`,
      `!!  No Chromium at ${CHROMIUM_PATH}. These tests drive the Debian package, never a downloaded browser.`,
      '!!  Install it with:  apt-get update && apt-get install -y chromium   (or set CHROMIUM_PATH)',
      line,
      '',
    ].join('\n'),
  );
  return true;
}

export interface PhoneBrowser {
  context: BrowserContext;
  /** A new tab that records console errors and uncaught exceptions (CSP violations show up there). */
  newPage(): Promise<{ page: Page; errors: string[] }>;
  close(): Promise<void>;
}

export async function launchPhoneBrowser(): Promise<PhoneBrowser> {
  const userDataDir = mkdtempSync(path.join(tmpdir(), 'gw-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: PHONE_VIEWPORT,
    deviceScaleFactor: 2,
    isMobile: true,
    hasTouch: true,
    locale: 'en-US',
    timeout: 60_000,
  });
  return {
    context,
    async newPage() {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('console', (msg) => {
        if (msg.type() === 'error') errors.push(msg.text());
      });
      page.on('pageerror', (err) => errors.push(String(err)));
      return { page, errors };
    },
    async close() {
      await context.close().catch(() => undefined);
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** Full-page PNG under test-artifacts/screenshots (gitignored). */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * Records every text the page's role="status" region shows, from now on, in page memory; read it back
 * with `statusHistory`. Asserting on the whole sequence avoids racing a short-lived status.
 */
export async function recordStatusTexts(page: Page): Promise<void> {
  await page.evaluate(() => {
    const el = document.querySelector('[role="status"]');
    const seen: string[] = [];
    (window as unknown as { __statusTexts: string[] }).__statusTexts = seen;
    if (!el) return;
    new MutationObserver(() => {
      const text = (el.textContent ?? '').trim();
      if (text && seen[seen.length - 1] !== text) seen.push(text);
    }).observe(el, { childList: true, subtree: true, characterData: true });
  });
}

export async function statusHistory(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as unknown as { __statusTexts?: string[] }).__statusTexts ?? []);
}

/** True when nothing sticks out sideways on the phone viewport. */
export async function fitsViewportWidth(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
}
