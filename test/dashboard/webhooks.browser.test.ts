import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { createAccount, type TestAccount } from '../support/accounts';
import { type TestServer } from '../support/server';
import { chromiumAvailable, launchPhoneBrowser, warnIfNoChromium, type PhoneBrowser } from '../support/browser';
import { startReceiver, type Receiver } from '../support/receiver';
import { createPayment, referenceBody } from '../support/payments';
import { createEndpoint, deliveries } from '../support/webhooks';
import { waitFor } from '../support/wait';
import { ensureDashboardBundle, LIVE_TIMEOUT, signInThroughForm, UI_TIMEOUT, unexpectedErrors } from './support/dashboard';
import { LAYOUTS, openPage, useLayout } from './support/product';
import { checkLayout } from './support/views';
import { sharedGateway } from '../support/server';

/**
 * The Webhooks view's endpoint cards beyond push deliveries (contract decisions, "Pull endpoints" and
 * "Chaos per endpoint"): a pull endpoint says so and lists its unacknowledged events instead of
 * deliveries; a push endpoint shows its chaos settings and report. Real gateway, real Chromium.
 */
vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });
warnIfNoChromium('test/dashboard/webhooks.browser.test.ts (webhook endpoint cards)');

/** The card of one endpoint (a region named by its heading, carrying the endpoint's id). */
const card = (page: Page, id: string) => page.locator(`section.endpoint[data-endpoint-id="${id}"]`);
const pendingIds = (c: Locator) => c.getByRole('list', { name: 'Pending events' }).getByRole('listitem').evaluateAll((items) => items.map((li) => li.getAttribute('data-event-id')));
/** The dd beside a dt, in a list of facts named `label`. */
const fact = (c: Locator, label: string, term: string) => c.locator(`dl[aria-label="${label}"] > dt:text-is("${term}") + dd`);

describe.skipIf(!chromiumAvailable)('webhook endpoint cards in Chromium', () => {
  let server: TestServer;
  let browser: PhoneBrowser;
  let receiver: Receiver;

  beforeAll(async () => {
    await ensureDashboardBundle();
    server = await sharedGateway();
    receiver = await startReceiver();
    browser = await launchPhoneBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await server?.stop();
  });

  const pending = async (account: TestAccount, id: string) => {
    const res = await account.api.get(`/webhook_endpoints/${id}/pending?limit=20`);
    expect(res.status, res.text).toBe(200);
    return res.body.data as any[];
  };

  it('a pull endpoint says Pull and lists its pending events oldest first, with no push deliveries; the form makes one', async () => {
    const account = await createAccount(server.baseUrl, 'Loja Pull');
    const made = await account.api.post('/webhook_endpoints', { mode: 'pull', name: 'Servidor sem entrada' });
    expect(made.status, made.text).toBe(201);
    const pull = made.body;
    expect(pull.mode).toBe('pull');
    // A push endpoint beside it, for events that never happen here: its card has the deliveries empty state.
    const push = await createEndpoint(account.api, `${receiver.url}/push/${account.id}`, { events: ['refund.succeeded'] });

    const payment = await createPayment(account.api, referenceBody(7000));
    const paid = await account.api.post('/sandbox/simulate/reference_paid', { reference: payment.reference.number });
    expect(paid.status, paid.text).toBe(200);
    const waiting = await waitFor(() => pending(account, pull.id), (list) => list.some((e) => e.type === 'payment.succeeded'), LIVE_TIMEOUT);
    expect(waiting.map((e) => e.type)).toEqual(['payment.created', 'reference.paid', 'payment.succeeded']);

    const { page, errors } = await browser.newPage();
    await signInThroughForm(page, server.baseUrl, account.sk);
    await openPage(page, 'Webhooks');
    const pullCard = card(page, pull.id);
    await pullCard.getByRole('list', { name: 'Pending events' }).waitFor({ timeout: UI_TIMEOUT });
    expect(await pullCard.getByRole('heading', { level: 2 }).textContent()).toBe('Servidor sem entrada');
    expect(await pullCard.getByTestId('endpoint-mode').locator('.badge').textContent()).toBe('Pull');
    expect(await pullCard.getByTestId('endpoint-mode').locator('.badge').getAttribute('data-mode')).toBe('PULL');
    // The events REST lists, in its order (oldest first), each with its type and creation time.
    expect(await pendingIds(pullCard)).toEqual(waiting.map((e) => e.id));
    const first = pullCard.locator(`li[data-event-id="${waiting[0].id}"]`);
    expect(await first.locator('code.event-type').textContent()).toBe('payment.created');
    expect(await first.locator('time').count()).toBe(1);
    // What belongs to push endpoints only is not on it.
    expect(await pullCard.getByText('No deliveries yet').count()).toBe(0);
    expect(await pullCard.getByRole('heading', { name: 'Deliveries' }).count()).toBe(0);
    expect(await pullCard.getByLabel('Delivery state').count()).toBe(0);
    expect(await pullCard.getByTestId('endpoint-chaos').textContent()).toMatch(/^not available/);
    // ...and is on the push card.
    const pushCard = card(page, push.id);
    expect(await pushCard.getByTestId('endpoint-mode').locator('.badge').textContent()).toBe('Push');
    expect(await pushCard.getByText('No deliveries yet').count()).toBe(1);
    expect(await pushCard.getByRole('list', { name: 'Pending events' }).count()).toBe(0);

    // The form makes a pull endpoint (no URL field then); its card says how to pull while nothing waits.
    await page.getByRole('radio', { name: /^Pull/ }).check();
    expect(await page.getByLabel('Endpoint URL').count()).toBe(0);
    await page.getByLabel('Events (comma separated, * for all)').fill('refund.succeeded');
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    await page.getByText(/signing secret \(shown once\): whsec_/).waitFor({ timeout: UI_TIMEOUT });
    const listed = (await account.api.get('/webhook_endpoints')).body.data as any[];
    const formMade = listed.find((e) => e.id !== pull.id && e.id !== push.id);
    expect(formMade).toMatchObject({ mode: 'pull', url: null, events: ['refund.succeeded'] });
    const emptyCard = card(page, formMade.id);
    await emptyCard.getByText('No pending events').waitFor({ timeout: UI_TIMEOUT });
    expect(await emptyCard.locator('.empty-state').textContent()).toContain(`GET /v1/webhook_endpoints/${formMade.id}/pending?limit=20`);

    for (const layout of LAYOUTS) {
      await useLayout(page, layout);
      await checkLayout(page, 'webhooks-pull', layout);
    }
    expect(unexpectedErrors(errors)).toEqual([]);
    await page.close();
  });

  it('chaos switched on through the API shows on the card with its settings and report; Turn off chaos switches it off', async () => {
    const account = await createAccount(server.baseUrl, 'Loja Caos');
    // This receiver answers 2xx to everything, forged copies included: the report's forged_accepted counts them.
    const endpoint = await createEndpoint(account.api, `${receiver.url}/chaos/${account.id}`);
    const { page, errors } = await browser.newPage();
    await signInThroughForm(page, server.baseUrl, account.sk);
    await openPage(page, 'Webhooks');
    const c = card(page, endpoint.id);
    await c.getByTestId('endpoint-chaos').waitFor({ timeout: UI_TIMEOUT });
    expect(await c.getByTestId('endpoint-chaos').textContent()).toMatch(/^Off/);
    expect(await c.getByTestId('chaos').count()).toBe(0);

    const on = await account.api.put(`/webhook_endpoints/${endpoint.id}/chaos`, { duplicate: 0.25, bad_signature: 1, delay_ms: { min: 0, max: 500 }, seed: 42 });
    expect(on.status, on.text).toBe(200);
    expect((await account.api.post(`/webhook_endpoints/${endpoint.id}/test`)).status).toBe(202);
    const chaos = await waitFor(
      async () => (await account.api.get(`/webhook_endpoints/${endpoint.id}/chaos`)).body,
      (b) => b.report?.forged_sent >= 1 && b.report?.forged_accepted >= 1,
      LIVE_TIMEOUT,
    );

    await page.reload();
    await c.getByTestId('chaos').waitFor({ timeout: UI_TIMEOUT });
    expect(await c.getByTestId('endpoint-chaos').textContent()).toBe('On');
    expect(await fact(c, 'Chaos settings', 'Duplicate').textContent()).toBe('25\u00a0%');
    expect(await fact(c, 'Chaos settings', 'Bad signature').textContent()).toBe('100\u00a0%');
    expect(await fact(c, 'Chaos settings', 'Reorder').textContent()).toBe('0\u00a0%');
    expect(await fact(c, 'Chaos settings', 'Delay').textContent()).toBe('0 ms to 500 ms');
    expect(await fact(c, 'Chaos settings', 'Seed').textContent()).toBe('42');
    expect(await fact(c, 'Chaos report', 'Forged copies sent').textContent()).toBe(String(chaos.report.forged_sent));
    expect(await fact(c, 'Chaos report', 'Forged accepted').textContent()).toBe(String(chaos.report.forged_accepted));
    expect(await c.getByRole('alert').filter({ hasText: /answered 2xx to \d+ forged/ }).count()).toBe(1);
    // Each forged copy is marked in the delivery list, as REST records it.
    const forged = (await deliveries(account.api, endpoint.id)).filter((d) => d.chaos === 'bad_signature');
    expect(forged.length).toBeGreaterThanOrEqual(1);
    expect(await c.locator('.badge[data-chaos="BAD_SIGNATURE"]').count()).toBe(forged.length);
    for (const layout of LAYOUTS) {
      await useLayout(page, layout);
      await checkLayout(page, 'webhooks-chaos', layout);
    }

    await c.getByRole('button', { name: 'Turn off chaos' }).click();
    await c.getByText('Turned off. What the run did:').waitFor({ timeout: UI_TIMEOUT });
    expect((await account.api.get(`/webhook_endpoints/${endpoint.id}/chaos`)).body.enabled).toBe(false);
    expect(((await account.api.get('/webhook_endpoints')).body.data as any[]).find((e) => e.id === endpoint.id).chaos).toBeNull();
    await c.getByTestId('endpoint-chaos').filter({ hasText: /^Off/ }).waitFor({ timeout: UI_TIMEOUT });
    expect(await c.getByRole('button', { name: 'Turn off chaos' }).count()).toBe(0);
    expect(Number(await fact(c, 'Chaos report of the run that ended', 'Forged copies sent').textContent())).toBeGreaterThanOrEqual(chaos.report.forged_sent);
    expect(unexpectedErrors(errors)).toEqual([]);
    await page.close();
  });
});
