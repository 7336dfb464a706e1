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
import { confirmDialog, LAYOUTS, openPage, useLayout } from './support/product';
import { checkLayout } from './support/views';
import { sharedGateway } from '../support/server';

/**
 * The Webhooks view beyond push deliveries (contract decisions, "Pull endpoints" and "Chaos per
 * endpoint"): a pull endpoint says so in the endpoints table and its page lists its unacknowledged events
 * (with Ack) instead of deliveries; a push endpoint's page shows its chaos settings and report. Real
 * gateway, real Chromium.
 */
vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });
warnIfNoChromium('test/dashboard/webhooks.browser.test.ts (webhook endpoint cards)');

const pendingIds = (c: Locator) => c.getByRole('list', { name: 'Pending events' }).getByRole('listitem').evaluateAll((items) => items.map((li) => li.getAttribute('data-event-id')));
/** The dd beside a dt, in a list of facts named `label`. */
const fact = (c: Locator, label: string, term: string) => c.locator(`dl[aria-label="${label}"] > dt:text-is("${term}") + dd`);
/** The row of one endpoint in the endpoints table. */
const endpointRow = (page: Page, id: string) => page.getByRole('table', { name: 'Webhook endpoints' }).locator(`tr[data-endpoint-id="${id}"]`);

describe.skipIf(!chromiumAvailable)('webhook endpoints in Chromium', () => {
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

  it('a pull endpoint says Pull and lists its pending events oldest first with Ack, with no push deliveries; the side panel makes one', async () => {
    const account = await createAccount(server.baseUrl, 'Loja Pull');
    const made = await account.api.post('/webhook_endpoints', { mode: 'pull', name: 'Servidor sem entrada' });
    expect(made.status, made.text).toBe(201);
    const pull = made.body;
    expect(pull.mode).toBe('pull');
    // A push endpoint beside it, for events that never happen here: its page has the deliveries empty state.
    const push = await createEndpoint(account.api, `${receiver.url}/push/${account.id}`, { events: ['refund.succeeded'] });

    const payment = await createPayment(account.api, referenceBody(7000));
    const paid = await account.api.post('/sandbox/simulate/reference_paid', { reference: payment.reference.number });
    expect(paid.status, paid.text).toBe(200);
    const waiting = await waitFor(() => pending(account, pull.id), (list) => list.some((e) => e.type === 'payment.succeeded'), LIVE_TIMEOUT);
    expect(waiting.map((e) => e.type)).toEqual(['payment.created', 'reference.paid', 'payment.succeeded']);

    const { page, errors } = await browser.newPage();
    await signInThroughForm(page, server.baseUrl, account.sk);
    await openPage(page, 'Webhooks');
    const pullRow = endpointRow(page, pull.id);
    await pullRow.waitFor({ timeout: UI_TIMEOUT });
    expect(await pullRow.getByRole('link').textContent()).toBe('Servidor sem entrada');
    expect(await pullRow.locator('.badge[data-mode]').textContent()).toBe('Pull');
    expect(await pullRow.locator('td.wide-only').textContent()).toBe('none (pulled)');
    expect(await endpointRow(page, push.id).locator('.badge[data-mode]').textContent()).toBe('Push');

    // The pull endpoint's page: the events REST lists, in its order (oldest first), each with its type, time and Ack.
    await pullRow.getByRole('link').click();
    await page.getByRole('heading', { level: 1, name: 'Servidor sem entrada' }).waitFor({ timeout: UI_TIMEOUT });
    await page.getByRole('list', { name: 'Pending events' }).waitFor({ timeout: UI_TIMEOUT });
    const main = page.locator('main');
    expect(await main.getByTestId('endpoint-mode').locator('.badge').getAttribute('data-mode')).toBe('PULL');
    expect(await pendingIds(main)).toEqual(waiting.map((e) => e.id));
    const first = main.locator(`li[data-event-id="${waiting[0].id}"]`);
    expect(await first.locator('code.event-type').textContent()).toBe('payment.created');
    expect(await first.locator('time').count()).toBe(1);
    // What belongs to push endpoints only is not on it.
    expect(await main.getByRole('heading', { name: 'Deliveries' }).count()).toBe(0);
    expect(await main.getByLabel('Delivery state').count()).toBe(0);
    expect(await main.getByTestId('chaos').count()).toBe(0);
    for (const layout of LAYOUTS) {
      await useLayout(page, layout);
      await checkLayout(page, 'webhooks-pull', layout);
    }
    // Ack: the event leaves the list and REST's pending events.
    await first.getByRole('button', { name: `Ack payment.created ${waiting[0].id}` }).click();
    await main.locator(`li[data-event-id="${waiting[0].id}"]`).waitFor({ state: 'detached', timeout: UI_TIMEOUT });
    expect((await pending(account, pull.id)).map((e) => e.id)).toEqual(waiting.slice(1).map((e) => e.id));

    // The push endpoint's page: its deliveries (none yet), no pending events.
    await page.goto(`${server.baseUrl}/dashboard/webhooks/${push.id}`);
    await page.getByText('No deliveries yet').waitFor({ timeout: UI_TIMEOUT });
    expect(await page.getByTestId('endpoint-mode').locator('.badge').textContent()).toBe('Push');
    expect(await page.getByRole('list', { name: 'Pending events' }).count()).toBe(0);

    // The side panel makes a pull endpoint (no URL field then); its secret is shown once, naming it.
    await openPage(page, 'Webhooks');
    await page.getByRole('button', { name: 'New endpoint' }).click();
    const panel = page.getByRole('dialog', { name: 'New endpoint' });
    await panel.getByRole('radio', { name: /^Pull/ }).check();
    expect(await panel.getByLabel('Endpoint URL').count()).toBe(0);
    await panel.getByLabel('Name (optional)').fill('Fila da contabilidade');
    await panel.getByLabel('Events (comma separated, * for all)').fill('refund.succeeded');
    await panel.getByRole('button', { name: 'Create endpoint' }).click();
    const secret = page.getByTestId('secret-once');
    await secret.waitFor({ timeout: UI_TIMEOUT });
    expect(await secret.textContent()).toMatch(/^Signing secret of Fila da contabilidade \(shown once, copy it now\): whsec_/);
    expect(await panel.count()).toBe(0);
    const listed = (await account.api.get('/webhook_endpoints')).body.data as any[];
    const formMade = listed.find((e) => e.id !== pull.id && e.id !== push.id);
    expect(formMade).toMatchObject({ mode: 'pull', url: null, events: ['refund.succeeded'], name: 'Fila da contabilidade' });
    await endpointRow(page, formMade.id).waitFor({ timeout: UI_TIMEOUT });

    // Its page says how to pull while nothing waits; deleting it asks, and its secret is gone with it.
    await endpointRow(page, formMade.id).getByRole('link').click();
    await page.getByText('No pending events').waitFor({ timeout: UI_TIMEOUT });
    expect(await page.locator('.empty-state').textContent()).toContain(`GET /v1/webhook_endpoints/${formMade.id}/pending?limit=20`);
    await page.getByRole('button', { name: 'Delete endpoint' }).click();
    const ask = confirmDialog(page, 'Delete this endpoint?');
    expect(await ask.textContent()).toContain('its unacknowledged events are deleted');
    await ask.getByRole('button', { name: 'Delete endpoint' }).click();
    await page.getByRole('table', { name: 'Webhook endpoints' }).waitFor({ timeout: UI_TIMEOUT });
    await endpointRow(page, formMade.id).waitFor({ state: 'detached', timeout: UI_TIMEOUT });
    expect(await page.getByTestId('secret-once').count()).toBe(0);
    expect(unexpectedErrors(errors)).toEqual([]);
    await page.close();
  });

  it('chaos switched on through the API shows on the page with its settings and report; Turn chaos off asks, then switches it off', async () => {
    const account = await createAccount(server.baseUrl, 'Loja Caos');
    // This receiver answers 2xx to everything, forged copies included: the report's forged_accepted counts them.
    const endpoint = await createEndpoint(account.api, `${receiver.url}/chaos/${account.id}`);
    const { page, errors } = await browser.newPage();
    await signInThroughForm(page, server.baseUrl, account.sk);
    await openPage(page, 'Webhooks');
    const row = endpointRow(page, endpoint.id);
    await row.waitFor({ timeout: UI_TIMEOUT });
    expect(await row.getByTestId('endpoint-state').textContent()).toBe('Enabled');
    await page.goto(`${server.baseUrl}/dashboard/webhooks/${endpoint.id}`);
    const c = page.getByTestId('chaos');
    await c.waitFor({ timeout: UI_TIMEOUT });
    expect(await c.getByRole('heading', { level: 2 }).textContent()).toBe('Chaos Off');
    expect(await c.getByRole('button', { name: 'Turn chaos off' }).count()).toBe(0);

    const on = await account.api.put(`/webhook_endpoints/${endpoint.id}/chaos`, { duplicate: 0.25, bad_signature: 1, delay_ms: { min: 0, max: 500 }, seed: 42 });
    expect(on.status, on.text).toBe(200);
    expect((await account.api.post(`/webhook_endpoints/${endpoint.id}/test`)).status).toBe(202);
    const chaos = await waitFor(
      async () => (await account.api.get(`/webhook_endpoints/${endpoint.id}/chaos`)).body,
      (b) => b.report?.forged_sent >= 1 && b.report?.forged_accepted >= 1,
      LIVE_TIMEOUT,
    );

    await page.reload();
    await c.getByRole('heading', { level: 2, name: 'Chaos On', exact: true }).waitFor({ timeout: UI_TIMEOUT });
    // The settings, in the form that changes them.
    expect(await c.getByLabel('Duplicate (%)').inputValue()).toBe('25');
    expect(await c.getByLabel('Bad signature (%)').inputValue()).toBe('100');
    expect(await c.getByLabel('Reorder (%)').inputValue()).toBe('0');
    expect(await c.getByLabel('Delay from (ms)').inputValue()).toBe('0');
    expect(await c.getByLabel('Delay to (ms)').inputValue()).toBe('500');
    expect(await c.getByLabel('Seed (optional)').inputValue()).toBe('42');
    expect(await fact(c, 'Chaos report', 'Forged copies sent').textContent()).toBe(String(chaos.report.forged_sent));
    expect(await fact(c, 'Chaos report', 'Forged accepted').textContent()).toBe(String(chaos.report.forged_accepted));
    expect(await c.getByRole('alert').filter({ hasText: /^Your receiver accepted \d+ of \d+ forged/ }).count()).toBe(1);
    // Each forged copy is marked in the deliveries table, as REST records it.
    const forged = (await deliveries(account.api, endpoint.id)).filter((d) => d.chaos === 'bad_signature');
    expect(forged.length).toBeGreaterThanOrEqual(1);
    await page.getByRole('table', { name: 'Deliveries' }).waitFor({ timeout: UI_TIMEOUT });
    expect(await page.locator('tr[data-chaos="BAD_SIGNATURE"]').count()).toBe(forged.length);
    for (const layout of LAYOUTS) {
      await useLayout(page, layout);
      await checkLayout(page, 'webhooks-chaos', layout);
    }

    await c.getByRole('button', { name: 'Turn chaos off' }).click();
    await confirmDialog(page, 'Turn chaos off?').getByRole('button', { name: 'Turn chaos off' }).click();
    await c.getByText('Turned off. What the run did:').waitFor({ timeout: UI_TIMEOUT });
    expect((await account.api.get(`/webhook_endpoints/${endpoint.id}/chaos`)).body.enabled).toBe(false);
    expect(((await account.api.get('/webhook_endpoints')).body.data as any[]).find((e) => e.id === endpoint.id).chaos).toBeNull();
    await c.getByRole('heading', { level: 2, name: 'Chaos Off', exact: true }).waitFor({ timeout: UI_TIMEOUT });
    expect(await c.getByRole('button', { name: 'Turn chaos off' }).count()).toBe(0);
    expect(Number(await fact(c, 'Chaos report of the run that ended', 'Forged copies sent').textContent())).toBeGreaterThanOrEqual(chaos.report.forged_sent);
    expect(unexpectedErrors(errors)).toEqual([]);
    await page.close();
  });
});
