import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createAccount, idempotencyKey } from '../support/accounts';
import { chromiumAvailable, launchPhoneBrowser, screenshot, warnIfNoChromium, type PhoneBrowser } from '../support/browser';
import type { TestServer } from '../support/server';
import { sharedGateway } from '../support/server';
import { waitFor } from '../support/wait';

/**
 * GraphiQL at GET /graphql in a real headless Chromium: it loads only from the gateway (no CDN, under a
 * strict CSP), opens without asking for the schema (no "Invalid API key") until a key is typed in its
 * header editor, then introspects once, runs a query with that key, and follows a subscription.
 */
warnIfNoChromium('test/graphql/graphiql.test.ts (GraphiQL page)');

describe.skipIf(!chromiumAvailable)('GraphiQL in Chromium', () => {
  let server: TestServer;
  let browser: PhoneBrowser;

  beforeAll(async () => {
    server = await sharedGateway();
    browser = await launchPhoneBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** Sets the text of the CodeMirror editor inside `container` (GraphiQL 3 uses CodeMirror 5). */
  async function setEditor(page: Page, container: string, text: string): Promise<void> {
    await page.evaluate(
      ([selector, value]) => {
        const el = document.querySelector(`${selector} .CodeMirror`) as (Element & { CodeMirror?: { setValue(v: string): void } }) | null;
        if (!el?.CodeMirror) throw new Error(`no CodeMirror editor in ${selector}`);
        el.CodeMirror.setValue(value);
      },
      [container, text] as const,
    );
    // GraphiQL derives the operation name from the edited text a moment later.
    await page.waitForTimeout(500);
  }
  const QUERY_EDITOR = '.graphiql-query-editor';
  const VISIBLE_TOOL_EDITOR = '.graphiql-editor-tool .graphiql-editor:not(.hidden)';

  it('runs queries and subscriptions with the key from the header editor, loading nothing from elsewhere', async () => {
    const acct = await createAccount(server.baseUrl);
    const { page, errors } = await browser.newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    const foreign: string[] = [];
    const introspections: string[] = [];
    page.on('request', (req) => {
      const url = new URL(req.url());
      if (url.host !== new URL(server.baseUrl).host) foreign.push(req.url());
      if (req.method() === 'POST' && url.pathname === '/graphql' && /IntrospectionQuery/.test(req.postData() ?? '')) introspections.push(String(req.headers().authorization));
    });

    const res = await page.goto(`${server.baseUrl}/graphql`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.locator('.graphiql-container').waitFor({ state: 'visible', timeout: 20_000 });

    // Without a key: a prompt saying where it goes, and no error (the schema is not asked for).
    const prompt = page.getByRole('status').filter({ hasText: 'Headers' });
    expect(await prompt.textContent()).toMatch(/^Put your secret key \(sk_test_…\) or a restricted key in the Headers tab below/);
    expect(await page.locator('body').textContent()).not.toMatch(/Invalid API key|authentication_failed/);
    await screenshot(page, 'graphiql-without-key');

    // The header editor (open from the start: the prompt points at it): a placeholder edit fetches nothing, then the key.
    const headersTab = page.getByRole('button', { name: /headers/i }).first();
    if ((await page.locator(VISIBLE_TOOL_EDITOR).count()) === 0) await headersTab.click();
    await setEditor(page, VISIBLE_TOOL_EDITOR, JSON.stringify({ Authorization: 'Bearer sk_test_...' }));
    await setEditor(page, VISIBLE_TOOL_EDITOR, JSON.stringify({ Authorization: `Bearer ${acct.sk}` }));
    // The schema, once: the docs explorer knows the Query type.
    await waitFor(async () => introspections.length, (n) => n > 0, 20_000);
    await prompt.waitFor({ state: 'hidden', timeout: 20_000 });
    await page.getByRole('button', { name: /documentation explorer/i }).first().click();
    await page.getByText('Query', { exact: true }).first().waitFor({ timeout: 20_000 });
    // Editing the headers again does not fetch the schema again.
    await setEditor(page, VISIBLE_TOOL_EDITOR, JSON.stringify({ Authorization: `Bearer ${acct.sk}` }, null, 2));

    await setEditor(page, QUERY_EDITOR, 'query Me { account { id livemode } }');
    await page.locator('.graphiql-execute-button').click();
    const result = page.locator('.result-window');
    await result.filter({ hasText: acct.id }).waitFor({ timeout: 20_000 });
    expect(await result.textContent()).toContain('"livemode": false');

    await setEditor(page, QUERY_EDITOR, 'subscription Live { events { type paymentIntent { id } } }');
    await page.locator('.graphiql-execute-button').click();
    await page.waitForTimeout(1_000);
    const intent = await acct.api.post('/payment_intents', { amount: 1000, currency: 'AOA', payment_method: 'multicaixa_reference' }, { idempotencyKey: idempotencyKey() });
    await result.filter({ hasText: intent.body.id }).waitFor({ timeout: 20_000 });
    expect(await result.textContent()).toContain('PAYMENT_CREATED');

    expect(introspections).toEqual([`Bearer ${acct.sk}`]);
    expect(foreign).toEqual([]);
    expect(errors.filter((e) => /Content Security Policy|Refused to/i.test(e))).toEqual([]);
    await page.close();
  });
});
