import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAccount } from '../support/accounts';
import { startTestServer, type TestServer } from '../support/server';
import { chromiumAvailable, launchPhoneBrowser, screenshot, warnIfNoChromium, type PhoneBrowser } from '../support/browser';
import { startReceiver, type Receiver } from '../support/receiver';
import { advanceClock, createPayment, expressBody, referenceBody } from '../support/payments';
import { createEndpoint } from '../support/webhooks';
import { waitFor } from '../support/wait';
import {
  ensureDashboardBundle,
  expectAxeClean,
  fitsPhoneWidth,
  LIVE_TIMEOUT,
  paymentRow,
  recordedTexts,
  recordTexts,
  signInThroughForm,
  signInToPayments,
  UI_TIMEOUT,
  unexpectedErrors,
  waitForRowStatus,
} from './support/dashboard';
import { confirmDialog, navLink, openPage } from './support/product';

/**
 * The dashboard app in a real headless Chromium at phone size, against the real gateway: signed in with
 * a fresh account's secret key through the form, driven by roles and names (the ones the contract
 * decisions fix), following payments made by the API live over GraphQL subscriptions.
 */
// Each test walks several pages and waits for live changes on a shared, loaded 2-core machine: room for that.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });
warnIfNoChromium('test/dashboard/app.browser.test.ts (the dashboard app)');

describe.skipIf(!chromiumAvailable)('dashboard app in Chromium', () => {
  let server: TestServer;
  let browser: PhoneBrowser;
  let receiver: Receiver;
  /** The gateway's upgraded sockets (graphql-ws), so that a test can cut them like a network drop. */
  const upgraded = new Set<Socket>();

  beforeAll(async () => {
    await ensureDashboardBundle();
    server = await startTestServer();
    server.gateway.httpServer.on('upgrade', (_req, socket: Socket) => {
      upgraded.add(socket);
      socket.once('close', () => upgraded.delete(socket));
    });
    receiver = await startReceiver();
    browser = await launchPhoneBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await server?.stop();
  });




  it('signs in with the secret key, which then appears in no storage, no readable cookie, no URL and no HTML', async () => {
    const account = await createAccount(server.baseUrl, 'Loja Dashboard');
    const { page, errors } = await browser.newPage();
    await browser.context.clearCookies();
    await page.goto(`${server.baseUrl}/dashboard`);
    const field = page.getByLabel('Secret key');
    expect(await field.getAttribute('type')).toBe('password');
    await expectAxeClean(page, 'the sign-in page');
    await screenshot(page, 'dashboard-sign-in');

    await field.fill('sk_test_thisKeyDoesNotExist000000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent({ timeout: UI_TIMEOUT })).resolves.toContain('That key was not accepted');
    await expectAxeClean(page, 'the sign-in page with its error');

    await field.fill(account.sk);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const nav = page.getByRole('navigation');
    await nav.waitFor({ timeout: UI_TIMEOUT });
    // At phone width the links are behind the Menu button.
    await nav.getByRole('button', { name: 'Menu' }).click();
    for (const name of ['Overview', 'Payments', 'Webhooks', 'Payment links', 'Checkout sessions', 'Events', 'Logs', 'API keys', 'Clock']) {
      expect(await nav.getByRole('link', { name, exact: true }).count(), name).toBe(1);
    }
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(1);
    // Signed in, the dashboard opens on the Overview.
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor({ timeout: UI_TIMEOUT });
    expect(page.url()).toBe(`${server.baseUrl}/dashboard`);

    const seen = await page.evaluate(() => ({
      local: JSON.stringify({ ...localStorage }),
      session: JSON.stringify({ ...sessionStorage }),
      cookie: document.cookie,
      html: document.documentElement.outerHTML,
      url: location.href,
    }));
    for (const [where, text] of Object.entries(seen)) expect(text.includes(account.sk), where).toBe(false);
    // The session cookie is HttpOnly: the page cannot read it at all.
    expect(seen.cookie).not.toContain('pgw_session');
    const cookies = await browser.context.cookies(server.baseUrl);
    const session = cookies.find((c) => c.name === 'pgw_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
    expect(session!.value).not.toContain(account.sk);
    expect(cookies.some((c) => c.value.includes(account.sk))).toBe(false);
    expect(unexpectedErrors(errors)).toEqual([]);
    await page.close();
  });

  it('the Payments table shows payments made by the API and their status changes live, newest first', async () => {
    const account = await createAccount(server.baseUrl);
    const { page, errors } = await browser.newPage();
    await signInToPayments(page, server.baseUrl, account.sk);
    await page.getByText('Live', { exact: true }).waitFor({ timeout: UI_TIMEOUT });

    const first = await createPayment(account.api, expressBody('923000000', 5000));
    // Recording starts before the row shows up: every status it shows is kept.
    await recordTexts(page, `tr[data-id="${first.id}"] .badge`);
    await paymentRow(page, first.id).waitFor({ timeout: LIVE_TIMEOUT });
    const failing = await createPayment(account.api, expressBody('923000001', 1200));
    // The rail's +2 s and +5 s steps on the sandbox clock rather than waited for: the table still has
    // to follow them live, over its subscription.
    await advanceClock(account.api, 5);
    await waitForRowStatus(page, first.id, 'SUCCEEDED');
    await waitForRowStatus(page, failing.id, 'FAILED');

    const statuses = await recordedTexts(page);
    expect(statuses.at(-1)).toBe('Succeeded');
    // The row changed under the open page: it showed an earlier status first, in the order of the spec (in words).
    const order = ['Awaiting payment', 'Processing', 'Succeeded'];
    expect(statuses.length).toBeGreaterThan(1);
    expect(statuses.map((s) => order.indexOf(s))).toEqual([...statuses.map((s) => order.indexOf(s))].sort());
    expect(statuses.every((s) => order.includes(s))).toBe(true);

    // Newest first: the failing payment was created after the first one.
    const ids = await page.getByRole('table', { name: 'Payments' }).locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-id')));
    expect(ids.indexOf(failing.id)).toBeLessThan(ids.indexOf(first.id));
    const firstRow = await paymentRow(page, first.id).textContent();
    expect(firstRow).toContain('5\u00a0000 AOA');
    expect(firstRow).toContain('Express');

    // The status filter (under the Filters disclosure) keeps the rows in that status only.
    await page.getByText('Filters', { exact: true }).click();
    await page.getByLabel('Status').selectOption('FAILED');
    await paymentRow(page, first.id).waitFor({ state: 'detached', timeout: UI_TIMEOUT });
    expect(await paymentRow(page, failing.id).count()).toBe(1);
    await page.getByLabel('Status').selectOption('');

    // "New test payment" opens a side panel that makes one per scenario: here a reference payment, which
    // stays PENDING. The panel closes and the list says what it made.
    await page.getByRole('button', { name: 'New test payment' }).click();
    const panel = page.getByRole('dialog', { name: 'New test payment' });
    await panel.getByLabel('Scenario').selectOption('reference');
    await panel.getByRole('button', { name: 'Create test payment' }).click();
    await page.getByText(/Created pay_/).waitFor({ timeout: UI_TIMEOUT });
    expect(await panel.count()).toBe(0);
    const list = (await account.api.get('/payment_intents?limit=5')).body.data;
    const made = list.find((p: any) => p.payment_method === 'multicaixa_reference');
    expect(made).toMatchObject({ status: 'PENDING', amount: 5000 });
    await waitForRowStatus(page, made.id, 'PENDING');
    expect(await fitsPhoneWidth(page)).toBe(true);
    await screenshot(page, 'dashboard-payments');
    expect(unexpectedErrors(errors)).toEqual([]);
    await page.close();
  });

  it('a dropped WebSocket reconnects and the table catches up on what happened meanwhile', async () => {
    const account = await createAccount(server.baseUrl);
    const { page } = await browser.newPage();
    await signInToPayments(page, server.baseUrl, account.sk);
    await page.getByText('Live', { exact: true }).waitFor({ timeout: UI_TIMEOUT });
    await recordTexts(page, '.live');
    expect(upgraded.size).toBeGreaterThan(0);
    for (const socket of upgraded) socket.destroy();
    // Made while the page's socket is down: the page learns of it when it is back (the first retry
    // waits at least 500 ms; the events subscription does not replay, the refetch on reconnect does).
    const made = await createPayment(account.api, expressBody('923000000', 5000));
    // Its rail moved on by the sandbox clock, not waited for: the page has to catch up on that too.
    await advanceClock(account.api, 5);
    await waitForRowStatus(page, made.id, 'SUCCEEDED');
    await page.getByText('Live', { exact: true }).waitFor({ timeout: UI_TIMEOUT });
    expect(await recordedTexts(page)).toEqual(['Live', 'Reconnecting…', 'Live']);
    await page.close();
  });
  it('the payment page: events in order, webhook deliveries with the exact bytes sent, Resend makes a new attempt, Refund refunds', async () => {
    const account = await createAccount(server.baseUrl);
    const hookPath = `/hooks/${account.id}`;
    await createEndpoint(account.api, `${receiver.url}${hookPath}`);
    const { page, errors } = await browser.newPage();
    await signInToPayments(page, server.baseUrl, account.sk);
    const made = await createPayment(account.api, expressBody('923000000', 7500));
    await page.getByRole('link', { name: made.id }).click({ timeout: LIVE_TIMEOUT });
    await page.getByRole('heading', { level: 1, name: new RegExp(made.id) }).waitFor({ timeout: UI_TIMEOUT });
    expect(page.url()).toBe(`${server.baseUrl}/dashboard/payments/${made.id}`);
    // The rail's +5 s on the sandbox clock; the open page still follows it live.
    await advanceClock(account.api, 5);
    await page.getByTestId('payment-status').filter({ hasText: 'SUCCEEDED' }).waitFor({ timeout: LIVE_TIMEOUT });

    const events = page.getByRole('list', { name: 'Events' }).getByRole('listitem');
    await events.nth(1).waitFor({ timeout: LIVE_TIMEOUT });
    const types = (await events.locator('code').allTextContents()).map((t) => t.trim());
    expect(types).toEqual(['payment.created', 'payment.succeeded']);

    const sent = await receiver.waitFor((r) => r.path === hookPath, 2, LIVE_TIMEOUT);
    const region = page.getByRole('region', { name: 'Webhook deliveries' });
    const deliveries = region.getByRole('listitem');
    await deliveries.filter({ hasText: 'DELIVERED' }).nth(1).waitFor({ timeout: LIVE_TIMEOUT });
    expect(await deliveries.count()).toBe(2);
    for (const request of sent) {
      const card = deliveries.filter({ hasText: String(request.headers['service-event-id']) });
      // Indented for reading; "Exact bytes, as signed" shows what the signature covers.
      expect(await card.getByTestId('request-body').textContent()).toBe(JSON.stringify(JSON.parse(request.rawBody), null, 2));
      await card.locator('summary', { hasText: 'What was sent' }).click();
      await card.getByLabel('Exact bytes, as signed').check();
      expect(await card.getByTestId('request-body').textContent()).toBe(request.rawBody);
      expect(await card.getByTestId('signature-header').textContent()).toBe(request.headers['service-signature']);
      expect(await card.getByTestId('delivery-attempts').textContent()).toBe('1');
      expect(await card.textContent()).toContain('200');
    }
    await expectAxeClean(page, 'the payment page');
    expect(await fitsPhoneWidth(page)).toBe(true);
    await screenshot(page, 'dashboard-payment-detail');

    const succeeded = sent.find((r) => JSON.parse(r.rawBody).type === 'payment.succeeded')!;
    const card = deliveries.filter({ hasText: String(succeeded.headers['service-event-id']) });
    await card.getByRole('button', { name: 'Resend' }).click();
    const again = await receiver.waitFor((r) => r.path === hookPath && r.headers['service-event-id'] === succeeded.headers['service-event-id'], 2, LIVE_TIMEOUT);
    await card.getByTestId('delivery-attempts').filter({ hasText: '2' }).waitFor({ timeout: UI_TIMEOUT });
    expect(await card.getByTestId('request-body').textContent()).toBe(again[1]!.rawBody);
    expect(await card.getByTestId('signature-header').textContent()).toBe(again[1]!.headers['service-signature']);
    // A paid payment offers a refund, not a cancellation; a full refund turns it REFUNDED, live.
    expect(await page.getByRole('button', { name: 'Cancel' }).count()).toBe(0);
    // Refund asks first, with the whole amount left as its default.
    await page.getByRole('button', { name: 'Refund…' }).click();
    await confirmDialog(page, /^Refund 7.500 Kz of 7.500 Kz\?$/).getByRole('button', { name: 'Refund', exact: true }).click();
    // Once the refund is made, its completion (+3 s) comes by the sandbox clock, and still shows live.
    await page.getByRole('list', { name: 'Refunds' }).getByRole('listitem').waitFor({ timeout: UI_TIMEOUT });
    await advanceClock(account.api, 3);
    await page.getByTestId('payment-status').filter({ hasText: 'REFUNDED' }).waitFor({ timeout: LIVE_TIMEOUT });
    await page.getByRole('list', { name: 'Refunds' }).getByText('SUCCEEDED').waitFor({ timeout: LIVE_TIMEOUT });
    await events.nth(2).waitFor({ timeout: LIVE_TIMEOUT });
    expect((await events.locator('code').allTextContents()).map((t) => t.trim())).toEqual(['payment.created', 'payment.succeeded', 'refund.succeeded']);
    expect(await page.getByRole('button', { name: 'Refund' }).count()).toBe(0);
    expect(unexpectedErrors(errors)).toEqual([]);
    await page.close();
  });

  it('Simulate reference paid pays a reference; Clock +72 hours expires an unpaid one, shown live in the table and on its page', async () => {
    const account = await createAccount(server.baseUrl);
    const paid = await createPayment(account.api, referenceBody(9000));
    const made = await createPayment(account.api, referenceBody());
    const { page, errors } = await browser.newPage();
    await signInThroughForm(page, server.baseUrl, account.sk);
    // "Simulate reference paid" pays one of them (reference.paid, then payment.succeeded).
    await page.goto(`${server.baseUrl}/dashboard/payments/${paid.id}`);
    await page.getByRole('button', { name: 'Simulate reference paid' }).click({ timeout: UI_TIMEOUT });
    await page.getByTestId('payment-status').filter({ hasText: 'SUCCEEDED' }).waitFor({ timeout: LIVE_TIMEOUT });
    expect(await page.getByRole('button', { name: 'Simulate reference paid' }).count()).toBe(0);

    await page.goto(`${server.baseUrl}/dashboard/payments/${made.id}`);
    await page.getByTestId('payment-status').locator('[data-status="PENDING"]').waitFor({ timeout: UI_TIMEOUT });
    // What a PENDING reference payment allows.
    expect(await page.getByRole('button', { name: 'Simulate reference paid' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Cancel' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Refund' }).count()).toBe(0);

    await (await navLink(page, 'Clock')).click();
    await page.getByRole('heading', { level: 1, name: 'Clock' }).waitFor({ timeout: UI_TIMEOUT });
    await page.getByTestId('sandbox-offset').waitFor({ timeout: UI_TIMEOUT });
    expect(await page.getByTestId('sandbox-offset').textContent()).toMatch(/^0 s/);
    expect(await page.getByRole('button', { name: 'Advance 1 minute' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Advance 1 hour' }).count()).toBe(1);
    await (await navLink(page, 'Payments')).click();
    await waitForRowStatus(page, made.id, 'PENDING');

    // The Clock page, then back to the table, which follows the expiry live.
    await (await navLink(page, 'Clock')).click();
    await page.getByRole('button', { name: 'Advance 72 hours' }).click();
    await page.getByTestId('sandbox-offset').filter({ hasText: '3 d ahead of real time' }).waitFor({ timeout: UI_TIMEOUT });
    await expectAxeClean(page, 'the Clock page');
    await screenshot(page, 'dashboard-clock');
    await (await navLink(page, 'Payments')).click();
    await waitForRowStatus(page, made.id, 'EXPIRED');
    await page.getByRole('link', { name: made.id }).click();
    await page.getByTestId('payment-status').filter({ hasText: 'EXPIRED' }).waitFor({ timeout: UI_TIMEOUT });
    const events = page.getByRole('list', { name: 'Events' }).getByRole('listitem');
    await events.nth(1).waitFor({ timeout: LIVE_TIMEOUT });
    expect((await events.locator('code').allTextContents()).map((t) => t.trim())).toEqual(['payment.created', 'payment.expired']);
    expect(await page.getByRole('button', { name: 'Simulate reference paid' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Cancel' }).count()).toBe(0);
    expect((await account.api.get(`/payment_intents/${made.id}`)).body.status).toBe('EXPIRED');
    expect(unexpectedErrors(errors)).toEqual([]);
    await page.close();
  });

  it('every page works at phone size, passes axe-core (no serious or critical violation) and is screenshotted', async () => {
    const account = await createAccount(server.baseUrl);
    const endpoint = await createEndpoint(account.api, `${receiver.url}/hooks/${account.id}`);
    await createPayment(account.api, expressBody('923000000', 5000));
    const { page, errors } = await browser.newPage();
    await signInThroughForm(page, server.baseUrl, account.sk);
    const open = (name: string) => openPage(page, name);
    const check = async (name: string) => {
      await expectAxeClean(page, `the ${name} page`);
      expect(await fitsPhoneWidth(page), `${name} fits 390 px`).toBe(true);
      await screenshot(page, `dashboard-${name.toLowerCase().replace(/ /g, '-')}`);
    };

    await open('Payments');
    await page.getByRole('table', { name: 'Payments' }).getByRole('link').first().waitFor({ timeout: UI_TIMEOUT });
    await check('Payments');

    await open('Webhooks');
    // The endpoints are a table; an endpoint's actions and deliveries are on its page.
    await page.getByRole('table', { name: 'Webhook endpoints' }).getByRole('link').first().click();
    await page.getByRole('button', { name: 'Send test ping' }).click();
    await receiver.waitFor((r) => r.path === `/hooks/${account.id}` && JSON.parse(r.rawBody).type === 'test.ping', 1, LIVE_TIMEOUT);
    // The state filter reads the server once: wait until the ping's delivery is recorded as DELIVERED.
    await waitFor(
      async () => (await account.api.get(`/webhook_endpoints/${endpoint.id}/deliveries`)).body.data,
      (list: any[]) => list.some((d) => d.event_type === 'test.ping' && d.state === 'DELIVERED'),
      LIVE_TIMEOUT,
    );
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('alertdialog', { name: 'Rotate the signing secret?' }).getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByText(/\(shown once, copy it now\): whsec_/).waitFor({ timeout: UI_TIMEOUT });
    await page.getByLabel('Delivery state').selectOption('DELIVERED');
    await page.getByRole('table', { name: 'Deliveries' }).getByRole('row').filter({ hasText: 'test.ping' }).first().waitFor({ timeout: LIVE_TIMEOUT });
    await check('Webhooks');

    await open('Payment links');
    await page.getByRole('button', { name: 'New payment link' }).click();
    await page.getByLabel('Amount (AOA)').fill('3500');
    await page.getByRole('button', { name: 'Create link' }).click();
    await page.getByRole('img', { name: /QR code of / }).waitFor({ timeout: UI_TIMEOUT });
    await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
    await page.getByRole('button', { name: /^Deactivate / }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Deactivate link' }).click();
    await page.getByTestId('link-state').filter({ hasText: 'Inactive' }).waitFor({ timeout: UI_TIMEOUT });
    await check('Payment links');

    await open('Checkout sessions');
    await page.getByRole('button', { name: 'New checkout session' }).click();
    await page.getByRole('button', { name: 'Create session' }).click();
    await page.getByRole('region', { name: /^Checkout session cs_/ }).getByText('Open', { exact: true }).waitFor({ timeout: UI_TIMEOUT });
    await check('Checkout session');
    await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
    await check('Checkout sessions');

    await open('Events');
    await page.getByRole('table', { name: 'Events' }).getByText('payment.created').first().waitFor({ timeout: UI_TIMEOUT });
    await check('Events');

    await open('Logs');
    await page.getByRole('table', { name: 'Logs' }).locator('tbody tr').first().waitFor({ timeout: UI_TIMEOUT });
    await check('Logs');

    await open('API keys');
    await page.getByRole('button', { name: 'New restricted key' }).click();
    await page.getByLabel('Key name').fill('reporting');
    await page.getByRole('button', { name: 'Create restricted key' }).click();
    await page.getByText(/New key \(shown once/).waitFor({ timeout: UI_TIMEOUT });
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('button', { name: 'Revoke reporting' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Revoke key' }).click();
    await page.getByTestId('key-state').filter({ hasText: /^Revoked / }).waitFor({ timeout: UI_TIMEOUT });
    await check('API keys');

    await open('Clock');
    await page.getByTestId('sandbox-time').waitFor({ timeout: UI_TIMEOUT });
    await check('Clock');
    expect(unexpectedErrors(errors)).toEqual([]);
    await page.close();
  });

  it('Sign out ends the session: the form is back and the old cookie gets 401', async () => {
    const account = await createAccount(server.baseUrl);
    const { page } = await browser.newPage();
    await signInThroughForm(page, server.baseUrl, account.sk);
    const cookie = (await browser.context.cookies(server.baseUrl)).find((c) => c.name === 'pgw_session')!;
    expect(cookie).toBeDefined();
    await page.getByRole('button', { name: 'Menu' }).click(); // at phone width Sign out is behind it
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Secret key').waitFor({ timeout: UI_TIMEOUT });
    const headers = { cookie: `pgw_session=${cookie.value}`, 'content-type': 'application/json' };
    const session = await fetch(`${server.baseUrl}/dashboard/session`, { headers });
    expect(session.status).toBe(401);
    const gql = await fetch(`${server.baseUrl}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query: '{ account { id } }' }) });
    expect(gql.status).toBe(401);
    expect((await gql.json()).errors[0].extensions.code).toBe('authentication_failed');
    await page.close();
  });
});
