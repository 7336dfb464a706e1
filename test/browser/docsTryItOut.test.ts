import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import { chromiumAvailable, launchPhoneBrowser, warnIfNoChromium, type PhoneBrowser } from '../support/browser';
import { startTestServer, type TestServer } from '../support/server';

/**
 * `/docs` "Try it out" calls the gateway that served the page, whatever its port or PUBLIC_BASE_URL
 * (contract decisions, "Sandbox dashboard: a product"): the contract's servers are relative, and the
 * page's CSP allows its own origin. The gateway here listens on an ephemeral port and its public URL
 * names another host on purpose.
 */
warnIfNoChromium('test/browser/docsTryItOut.test.ts (docs page Try it out)');

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ PUBLIC_BASE_URL: 'https://gateway.example' });
});
afterAll(async () => server?.stop());

describe('the docs page targets its own origin', () => {
  it('the document it loads has servers that resolve to this gateway, and its CSP allows them', async () => {
    const page = await fetch(`${server.baseUrl}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const specPath = /url: '([^']+)'/.exec(html)?.[1];
    expect(specPath).toBe('/openapi.json');
    const specUrl = new URL(specPath!, `${server.baseUrl}/docs`);
    const spec = (await (await fetch(specUrl)).json()) as { servers: { url: string }[]; paths: Record<string, { servers?: { url: string }[] }> };

    const origin = new URL(server.baseUrl).origin;
    expect(origin).not.toBe('http://localhost:3000');
    expect(new URL(spec.servers[0]!.url, specUrl).href).toBe(`${origin}/v1`);
    expect(new URL(spec.paths['/healthz']!.servers![0]!.url, specUrl).origin).toBe(origin);
    // connect-src 'self' is this origin: what "Try it out" fetches.
    expect(page.headers.get('content-security-policy')).toContain("connect-src 'self'");

    // And a call through that server reaches this gateway.
    const account = await createAccount(server.baseUrl);
    const res = await fetch(`${new URL(spec.servers[0]!.url, specUrl).href}/account`, { headers: { authorization: `Bearer ${account.sk}` } });
    expect(res.status).toBe(200);
  });
});

describe.skipIf(!chromiumAvailable)('Try it out in Chromium', () => {
  let browser: PhoneBrowser;
  beforeAll(async () => {
    browser = await launchPhoneBrowser();
  });
  afterAll(async () => browser?.close());

  it('GET /account answers 401 from this gateway (no key given), not a network failure', async () => {
    const { page, errors } = await browser.newPage();
    await page.goto(`${server.baseUrl}/docs#/Account/getAccount`);
    await page.getByRole('button', { name: 'Try it out' }).click();
    await page.getByRole('button', { name: 'Execute' }).click();
    const status = page.locator('.live-responses-table tbody .response-col_status').first();
    await status.waitFor({ state: 'visible', timeout: 20_000 });
    expect((await status.textContent())?.trim()).toBe('401');
    // The request URL Swagger UI shows is this gateway's, not the contract's default host.
    expect(await page.locator('.request-url pre').first().textContent()).toBe(`${server.baseUrl}/v1/account`);
    expect(errors.filter((e) => /Content Security Policy|Failed to fetch/i.test(e))).toEqual([]);
  });

  it('the deprecation Link of GET /public/payments/{id} opens that operation, its client_token marked deprecated', async () => {
    const { page } = await browser.newPage();
    // The target of `Link: </docs#/Public/getPublicPayment>; rel="deprecation"` (src/rest/deprecation.ts).
    await page.goto(`${server.baseUrl}/docs#/Public/getPublicPayment`);
    const row = page.locator('#operations-Public-getPublicPayment tr[data-param-name="client_token"]');
    await row.waitFor({ state: 'visible', timeout: 20_000 });
    expect((await row.locator('.parameter__deprecated').textContent())?.trim()).toBe('deprecated');
    expect(await row.textContent()).toContain('Authorization: Bearer ct_test_');
  });
});
