import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/**
 * Headless Chromium for the page tests: the Debian package at /usr/bin/chromium (never a downloaded
 * browser: the machines are offline), driven by playwright-core, with a fresh context (cookies, storage)
 * per launchPhoneBrowser and a phone-sized viewport.
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

/**
 * One Chromium per vitest worker: the suite runs with `isolate: false` (vitest.config.ts), so this module
 * and the browser it started outlive a test file, and the next file's launchPhoneBrowser opens a new
 * context on it (its own cookies, storage and cache, as a fresh profile had) instead of starting
 * Chromium again. Playwright closes the browser when the worker process exits.
 */
let shared: Promise<Browser> | undefined;

function sharedChromium(): Promise<Browser> {
  if (!shared) {
    const launching = chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS, timeout: 60_000 });
    shared = launching;
    // A browser that failed to start, or that died, is started again by the next file.
    launching.then((browser) => browser.on('disconnected', () => shared === launching && (shared = undefined))).catch(() => (shared = undefined));
  }
  return shared;
}

export async function launchPhoneBrowser(): Promise<PhoneBrowser> {
  const browser = await sharedChromium();
  const context = await browser.newContext({
    viewport: PHONE_VIEWPORT,
    // Layout is checked in CSS pixels, which the device pixel ratio does not change; at 2 Chromium painted
    // four times the pixels (`npx vitest run test/dashboard`: 189 s against 172 s at 1, same tests).
    deviceScaleFactor: 1,
    isMobile: true,
    hasTouch: true,
    locale: 'en-US',
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
    },
  };
}

/**
 * With PGW_SCREENSHOTS=1, a full-page PNG under test-artifacts/screenshots (gitignored), for a person to
 * look at; otherwise nothing. No test reads them back, and encoding a tall page (the Webhooks view at
 * phone width) took longer than the checks around it, in every run.
 */
export async function screenshot(page: Page, name: string): Promise<string | undefined> {
  if (process.env.PGW_SCREENSHOTS !== '1') return undefined;
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
