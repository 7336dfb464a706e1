import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_CSP } from '../../src/http/contentSecurityPolicy';
import { type TestServer } from '../support/server';
import { ensureDashboardBundle } from './support/dashboard';
import { sharedGateway } from '../support/server';

/**
 * How the gateway serves the dashboard app (src/dashboard/assetsRouter.ts), over plain HTTP: the shell
 * for every app path, the bundle with content-hashed URLs, the pages' CSP, and the session routes left
 * to the session router. The browser tests (app.browser.test.ts) drive the app itself.
 */
describe('dashboard app assets', () => {
  let server: TestServer;

  beforeAll(async () => {
    await ensureDashboardBundle();
    server = await sharedGateway();
  });
  afterAll(async () => {
    await server?.stop();
  });

  async function shell(path: string) {
    const res = await fetch(`${server.baseUrl}${path}`);
    return { res, html: await res.text() };
  }

  it('answers /dashboard and every app path with the same HTML shell, never cached, under the CSP', async () => {
    const { res, html } = await shell('/dashboard');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-security-policy')).toBe(PAGE_CSP);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    // No inline code: every script is loaded from this origin (the CSP allows nothing else).
    expect(html).toMatch(/<script type="module" src="\/dashboard\/assets\/app\.js\?v=[0-9a-f]{12}"><\/script>/);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=/);
    for (const path of ['/dashboard/', '/dashboard/payments', '/dashboard/payments/pay_123', '/dashboard/clock']) {
      const other = await shell(path);
      expect(other.res.status, path).toBe(200);
      expect(other.html, path).toBe(html);
    }
  });

  it('serves the bundle with a long cache under its current hash only', async () => {
    const { html } = await shell('/dashboard');
    for (const file of ['app.js', 'app.css']) {
      const url = new RegExp(`/dashboard/assets/${file.replace('.', '\\.')}\\?v=[0-9a-f]{12}`).exec(html)?.[0];
      expect(url, file).toBeDefined();
      const current = await fetch(`${server.baseUrl}${url}`);
      expect(current.status).toBe(200);
      expect(current.headers.get('content-type')).toMatch(file.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      expect(current.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect((await current.text()).length).toBeGreaterThan(1000);
      const stale = await fetch(`${server.baseUrl}/dashboard/assets/${file}?v=000000000000`);
      expect(stale.headers.get('cache-control')).toBe('no-cache');
    }
    const missing = await fetch(`${server.baseUrl}/dashboard/assets/other.js`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.code).toBe('resource_not_found');
  });

  it('leaves /dashboard/session to the session routes (JSON, not the shell)', async () => {
    const res = await fetch(`${server.baseUrl}/dashboard/session`);
    expect(res.status).toBe(401);
    expect((await res.json()).error.code).toBe('authentication_failed');
  });
});
