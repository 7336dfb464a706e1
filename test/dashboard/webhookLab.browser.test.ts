import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Page } from 'playwright-core';
import { createAccount, type TestAccount } from '../support/accounts';
import { startTestServer, type TestServer } from '../support/server';
import { chromiumAvailable, launchPhoneBrowser, warnIfNoChromium, type PhoneBrowser } from '../support/browser';
import { startReceiver, type ReceivedRequest, type Receiver } from '../support/receiver';
import { advanceClock, createPayment, expressBody } from '../support/payments';
import { createEndpoint, deliveries } from '../support/webhooks';
import { waitFor } from '../support/wait';
import { verifies } from '../webhooks/support/chaos';
import { gqlData } from '../graphql/support';
import { ensureDashboardBundle, LIVE_TIMEOUT, signInThroughForm, UI_TIMEOUT, unexpectedErrors } from './support/dashboard';
import { checkPage, confirmDialog, LAYOUTS, openPage, useLayout } from './support/product';
import { tableRows } from './support/views';

/**
 * Issue 58, the webhook lab on screen (contract decisions, "Sandbox dashboard: a data product"): the
 * endpoints as a table, an endpoint's page with its deliveries a page at a time (filters in the URL) and
 * a detail pane with every attempt, chaos set from the page with its report as a verdict, chaos copies
 * labelled and never resent, and questions before the irreversible. Real gateway, receiver and Chromium.
 */
vi.setConfig({ testTimeout: 300_000, hookTimeout: 120_000 });
warnIfNoChromium('test/dashboard/webhookLab.browser.test.ts (the webhook lab)');

/** How tall the page is, in screens of its viewport. */
const screensTall = (page: Page) => page.evaluate(() => document.documentElement.scrollHeight / window.innerHeight);
const endpointsTable = (page: Page) => page.getByRole('table', { name: 'Webhook endpoints' });
const deliveriesTable = (page: Page) => page.getByRole('table', { name: 'Deliveries' });
const deliveryRows = (page: Page) => deliveriesTable(page).locator('tbody tr');

describe.skipIf(!chromiumAvailable)('the webhook lab in Chromium', () => {
  let server: TestServer;
  let browser: PhoneBrowser;
  let receiver: Receiver;
  /** Paths whose receiver checks signatures (400 to a forged copy), with the secret it checks against. */
  const careful = new Map<string, string>();
  /** Paths that answer 500 while listed. */
  const failing = new Set<string>();
  /** Set by the test that stops the gateway, so that it is not stopped twice. */
  let stopped = false;

  beforeAll(async () => {
    await ensureDashboardBundle();
    server = await startTestServer();
    receiver = await startReceiver();
    receiver.reply = (r: ReceivedRequest) => {
      if (failing.has(r.path)) return { status: 500 };
      const secret = careful.get(r.path);
      return { status: secret && !verifies(r, secret) ? 400 : 200 };
    };
    browser = await launchPhoneBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    if (!stopped) await server?.stop();
  });

  const signedIn = async (account: TestAccount) => {
    const { page, errors } = await browser.newPage();
    await signInThroughForm(page, server.baseUrl, account.sk);
    return { page, errors };
  };

  it('3 endpoints and 150 deliveries: a table of endpoints and a paged endpoint page, each under 3 screens; filters in the URL; every attempt in the detail', async () => {
    const account = await createAccount(server.baseUrl, 'Loja Grande');
    const names = ['Loja principal', 'Armazém', 'Contabilidade'];
    const endpoints = await Promise.all(
      names.map((name, i) => createEndpoint(account.api, `${receiver.url}/size/${account.id}/${i}`, { name, description: `Recebe os eventos de ${name.toLowerCase()}` })),
    );
    // 25 payments, each created and succeeded: 2 events to 3 endpoints = 150 deliveries. Made at once (no
    // assertion depends on their order), so that they all succeed about 5 s later, not 5 s after the last.
    // They succeed on their own; the clock is not advanced, as its banner would be on every screenshot.
    await Promise.all(Array.from({ length: 25 }, (_, i) => createPayment(account.api, expressBody('923000000', 1000 * (i + 1)))));
    const counts = `query { webhookEndpoints { id recentSuccess { delivered failed rate } } }`;
    // Signing in (it lands on the Overview) needs none of the deliveries: it is done while they are made.
    const [done, { page, errors }] = await Promise.all([
      waitFor(
        () => gqlData(server.baseUrl, account.sk, counts),
        (d: any) => d.webhookEndpoints.every((e: any) => e.recentSuccess.delivered === 50),
        LIVE_TIMEOUT,
        250,
      ),
      signedIn(account),
    ]);
    expect(done.webhookEndpoints.map((e: any) => e.recentSuccess)).toEqual(endpoints.map(() => ({ delivered: 50, failed: 0, rate: 1 })));

    await openPage(page, 'Webhooks');
    await endpointsTable(page).waitFor({ timeout: UI_TIMEOUT });
    const rows = await tableRows(endpointsTable(page));
    expect(rows).toHaveLength(3);
    for (const [i, name] of names.entries()) {
      const row = rows.find((r) => r[0]?.startsWith(name));
      expect(row, name).toBeDefined();
      // Name and description, mode, URL, state, success over 24 h with what it counts.
      expect(row![0]).toBe(`${name}Recebe os eventos de ${name.toLowerCase()}`);
      expect(row![1]).toBe('Push');
      expect(row![2]).toBe(`${receiver.url}/size/${account.id}/${i}`);
      expect(row![3]).toBe('Enabled');
      expect(row![4]).toBe('100\u00a0%50 delivered, 0 failed');
    }
    for (const layout of LAYOUTS) {
      await useLayout(page, layout);
      expect(await screensTall(page), `the endpoints table (${layout.name})`).toBeLessThan(3);
      await checkPage(page, 'webhooks', layout);
    }

    // An endpoint's page: 20 deliveries a page, newest first.
    const [first] = endpoints;
    await endpointsTable(page).getByRole('link', { name: names[0] }).click();
    await page.getByRole('heading', { level: 1, name: names[0] }).waitFor({ timeout: UI_TIMEOUT });
    expect(new URL(page.url()).pathname).toBe(`/dashboard/webhooks/${first.id}`);
    await deliveriesTable(page).waitFor({ timeout: UI_TIMEOUT });
    expect(await deliveryRows(page).count()).toBe(20);
    const rest = await deliveries(account.api, first.id);
    expect(await deliveryRows(page).evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-delivery-id')))).toEqual(rest.slice(0, 20).map((d) => d.id));
    for (const layout of LAYOUTS) {
      await useLayout(page, layout);
      expect(await screensTall(page), `an endpoint's page (${layout.name})`).toBeLessThan(3);
      await checkPage(page, 'webhook-endpoint', layout);
    }
    // Only "Next" on the first page; the page after it is in the URL, and "Previous" comes back.
    expect(await page.getByRole('button', { name: 'Previous' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Next' }).click();
    await page.waitForURL((u) => u.searchParams.get('after') === rest[19].id, { timeout: UI_TIMEOUT });
    await deliveriesTable(page).locator(`tr[data-delivery-id="${rest[20].id}"]`).waitFor({ timeout: UI_TIMEOUT });
    expect(await deliveryRows(page).count()).toBe(20);
    await page.getByRole('button', { name: 'Previous' }).click();
    await deliveriesTable(page).locator(`tr[data-delivery-id="${rest[0].id}"]`).waitFor({ timeout: UI_TIMEOUT });

    // Filters in the URL: one event type, kept by a reload.
    await page.getByLabel('Event type').selectOption('PAYMENT_SUCCEEDED');
    await page.waitForURL((u) => u.searchParams.get('type') === 'PAYMENT_SUCCEEDED', { timeout: UI_TIMEOUT });
    await page.reload();
    await deliveriesTable(page).waitFor({ timeout: UI_TIMEOUT });
    expect(await page.getByLabel('Event type').inputValue()).toBe('PAYMENT_SUCCEEDED');
    await page.waitForFunction(() => Array.from(document.querySelectorAll('table.deliveries-table tbody th button')).every((b) => b.textContent === 'payment.succeeded'), null, {
      timeout: UI_TIMEOUT,
    });
    expect(await deliveryRows(page).count()).toBe(20);
    // A state no delivery is in: said in words, and no pager under the empty list.
    await page.getByLabel('Delivery state').selectOption('DEAD_LETTER');
    await page.getByText('No deliveries match these filters').waitFor({ timeout: UI_TIMEOUT });
    expect(new URL(page.url()).searchParams.get('state')).toBe('DEAD_LETTER');
    expect(await page.getByRole('button', { name: /^(Next|Previous)$/ }).count()).toBe(0);
    await page.getByLabel('Delivery state').selectOption('');

    // The detail pane: its attempt, the headers sent and the body indented; the list stays behind it.
    const one = rest.find((d) => d.event_type === 'payment.succeeded')!;
    await deliveriesTable(page).locator(`tr[data-delivery-id="${one.id}"] th button`).click();
    const pane = page.getByRole('dialog', { name: 'Delivery' });
    const attempts = pane.getByRole('table', { name: 'Attempts' });
    await attempts.waitFor({ timeout: UI_TIMEOUT });
    const attemptRows = await tableRows(attempts);
    expect(attemptRows).toHaveLength(1);
    expect(attemptRows[0]?.[2]).toBe('HTTP 200');
    const headers = await pane.getByTestId('request-headers').textContent();
    const sent = receiver.received.find((r) => r.headers['service-event-id'] === one.event_id && r.path === `/size/${account.id}/0`)!;
    expect(headers).toContain(`Service-Signature: ${sent.headers['service-signature']}`);
    expect(headers).toContain(`Service-Event-Id: ${one.event_id}`);
    const body = await pane.getByTestId('request-body').textContent();
    expect(body).toBe(JSON.stringify(JSON.parse(sent.rawBody), null, 2));
    for (const layout of LAYOUTS) {
      await useLayout(page, layout);
      await checkPage(page, 'webhook-delivery', layout);
    }
    await pane.getByRole('button', { name: 'Close' }).click();
    expect(new URL(page.url()).searchParams.get('type')).toBe('PAYMENT_SUCCEEDED');

    // Delete asks first; Cancel keeps it, confirming deletes it and goes back to the table.
    await page.getByRole('button', { name: 'Delete endpoint' }).click();
    await confirmDialog(page, 'Delete this endpoint?').getByRole('button', { name: 'Cancel' }).click();
    const listedIds = async () => ((await account.api.get('/webhook_endpoints')).body.data as any[]).map((e) => e.id);
    expect(await listedIds()).toContain(first.id);
    await page.getByRole('button', { name: 'Delete endpoint' }).click();
    const ask = confirmDialog(page, 'Delete this endpoint?');
    expect(await ask.textContent()).toContain('its pending retries are cancelled');
    await ask.getByRole('button', { name: 'Delete endpoint' }).click();
    await endpointsTable(page).waitFor({ timeout: UI_TIMEOUT });
    await page.waitForFunction(() => document.querySelectorAll('table.endpoints-table tbody tr').length === 2, null, { timeout: UI_TIMEOUT });
    expect(await listedIds()).not.toContain(first.id);
    expect(unexpectedErrors(errors)).toEqual([]);
    await page.close();
  });

  it('chaos set from the page: asks first, labels forged copies, never offers them for resend, and gives the verdict', async () => {
    const account = await createAccount(server.baseUrl, 'Loja Segura');
    const path = `/careful/${account.id}`;
    const endpoint = await createEndpoint(account.api, `${receiver.url}${path}`, { name: 'Recetor cuidadoso' });
    careful.set(path, endpoint.secret);
    const { page, errors } = await signedIn(account);
    await page.goto(`${server.baseUrl}/dashboard/webhooks/${endpoint.id}`);
    const chaos = page.getByTestId('chaos');
    await chaos.waitFor({ timeout: UI_TIMEOUT });
    expect(await chaos.getByRole('heading', { level: 2 }).textContent()).toBe('Chaos Off');

    // The form is folded while chaos is off. A value out of range is refused with the field's label.
    await chaos.getByText('Set up chaos').click();
    await chaos.getByLabel('Bad signature (%)').fill('150');
    await chaos.getByRole('button', { name: 'Turn chaos on' }).click();
    expect(await chaos.getByRole('alert').textContent()).toBe('Bad signature (%) must be a number from 0 to 100.');
    await chaos.getByLabel('Bad signature (%)').fill('100');
    await chaos.getByRole('button', { name: 'Turn chaos on' }).click();
    const ask = confirmDialog(page, 'Turn chaos on?');
    expect(await ask.textContent()).toContain('a forged copy with a wrong signature before 100 % of deliveries');
    await ask.getByRole('button', { name: 'Cancel' }).click();
    expect((await account.api.get(`/webhook_endpoints/${endpoint.id}/chaos`)).body.enabled).toBe(false);
    await chaos.getByRole('button', { name: 'Turn chaos on' }).click();
    await confirmDialog(page, 'Turn chaos on?').getByRole('button', { name: 'Turn chaos on' }).click();
    await chaos.getByRole('heading', { level: 2, name: 'Chaos On', exact: true }).waitFor({ timeout: UI_TIMEOUT });
    expect((await account.api.get(`/webhook_endpoints/${endpoint.id}/chaos`)).body).toMatchObject({ enabled: true, bad_signature: 1 });

    // Five pings: five forged copies, each refused by this receiver, and five genuine deliveries.
    for (let i = 0; i < 5; i++) expect((await account.api.post(`/webhook_endpoints/${endpoint.id}/test`)).status).toBe(202);
    await waitFor(async () => (await account.api.get(`/webhook_endpoints/${endpoint.id}/chaos`)).body.report, (r) => r.forged_sent === 5 && r.forged_rejected === 5, LIVE_TIMEOUT, 500);
    await waitFor(() => deliveries(account.api, endpoint.id), (list) => list.filter((d) => !d.chaos && d.state === 'DELIVERED').length === 5, LIVE_TIMEOUT, 500);
    await page.getByRole('button', { name: 'Refresh' }).click();
    const verdict = chaos.locator('.verdict');
    await verdict.filter({ hasText: 'rejected' }).waitFor({ timeout: UI_TIMEOUT });
    expect(await verdict.textContent()).toBe('Your receiver rejected 5 of 5 forged copies.');

    // Each forged copy is a row, labelled, and its outcome is the receiver's success, not "Gave up".
    await deliveriesTable(page).locator('tr[data-chaos="BAD_SIGNATURE"]').nth(4).waitFor({ timeout: UI_TIMEOUT });
    const forgedRow = deliveriesTable(page).locator('tr[data-chaos="BAD_SIGNATURE"]').first();
    expect(await forgedRow.textContent()).toContain('Forged copy (wrong signature) — a good receiver rejects it');
    expect(await forgedRow.locator('[data-outcome]').textContent()).toBe('Rejected, as it should');
    expect(await deliveriesTable(page).getByText('Gave up').count()).toBe(0);
    await forgedRow.locator('th button').click();
    const pane = page.getByRole('dialog', { name: 'Delivery' });
    await pane.getByRole('table', { name: 'Attempts' }).waitFor({ timeout: UI_TIMEOUT });
    const forgedAttempts = await tableRows(pane.getByRole('table', { name: 'Attempts' }));
    expect(forgedAttempts.map((r) => r[2])).toEqual(['HTTP 400']);
    expect(await pane.getByRole('button', { name: 'Resend' }).count()).toBe(0);
    expect(await pane.getByTestId('delivery-why').count()).toBe(0);
    await pane.getByRole('button', { name: 'Close' }).click();
    for (const layout of LAYOUTS) {
      await useLayout(page, layout);
      await checkPage(page, 'webhook-chaos', layout);
    }

    // Turning it off asks too, and the run's report stays on screen.
    await chaos.getByRole('button', { name: 'Turn chaos off' }).click();
    await confirmDialog(page, 'Turn chaos off?').getByRole('button', { name: 'Turn chaos off' }).click();
    await chaos.getByText('Turned off. What the run did:').waitFor({ timeout: UI_TIMEOUT });
    expect(await verdict.textContent()).toBe('Your receiver rejected 5 of 5 forged copies.');
    expect((await account.api.get(`/webhook_endpoints/${endpoint.id}/chaos`)).body.enabled).toBe(false);
    expect(unexpectedErrors(errors)).toEqual([]);
    await page.close();
  });

  it('a receiver that accepts forged copies gets a warning; a dead letter lists every attempt and is resent only after a question', async () => {
    const account = await createAccount(server.baseUrl, 'Loja Ingénua');
    const naive = await createEndpoint(account.api, `${receiver.url}/naive/${account.id}`, { name: 'Recetor ingénuo' });
    const on = await account.api.put(`/webhook_endpoints/${naive.id}/chaos`, { stale_timestamp: 1, seed: 7 });
    expect(on.status, on.text).toBe(200);
    expect((await account.api.post(`/webhook_endpoints/${naive.id}/test`)).status).toBe(202);
    await waitFor(async () => (await account.api.get(`/webhook_endpoints/${naive.id}/chaos`)).body.report, (r) => r.forged_accepted === 1, LIVE_TIMEOUT, 500);

    const { page, errors } = await signedIn(account);
    await page.goto(`${server.baseUrl}/dashboard/webhooks/${naive.id}`);
    const warning = page.getByTestId('chaos').getByRole('alert');
    await warning.waitFor({ timeout: UI_TIMEOUT });
    expect(await warning.textContent()).toMatch(/^Your receiver accepted 1 of 1 forged copy: it does not verify signatures/);
    const staleRow = deliveriesTable(page).locator('tr[data-chaos="STALE_TIMESTAMP"]');
    expect(await staleRow.locator('[data-outcome]').textContent()).toBe('Accepted — a bug');
    // Live: a ping made through the API shows as new rows, without a reload or Refresh.
    const before = await deliveryRows(page).count();
    expect((await account.api.post(`/webhook_endpoints/${naive.id}/test`)).status).toBe(202);
    await deliveryRows(page).nth(before).waitFor({ timeout: LIVE_TIMEOUT });

    // A receiver failing with 500: four attempts, then a dead letter.
    const path = `/failing/${account.id}`;
    failing.add(path);
    const down = await createEndpoint(account.api, `${receiver.url}${path}`, { name: 'Recetor em baixo' });
    expect((await account.api.post(`/webhook_endpoints/${down.id}/test`)).status).toBe(202);
    await waitFor(() => deliveries(account.api, down.id), (list) => list[0]?.attempts === 1, LIVE_TIMEOUT, 500);
    await advanceClock(account.api, 10 + 60 + 300 + 1);
    const [dead] = await waitFor(() => deliveries(account.api, down.id), (list) => list[0]?.state === 'DEAD_LETTER', LIVE_TIMEOUT, 500);
    await page.goto(`${server.baseUrl}/dashboard/webhooks/${down.id}?state=DEAD_LETTER`);
    const row = deliveriesTable(page).locator(`tr[data-delivery-id="${dead.id}"]`);
    await row.waitFor({ timeout: UI_TIMEOUT });
    expect(await row.getByTestId('delivery-attempts').textContent()).toBe('4');
    await row.locator('th button').click();
    const pane = page.getByRole('dialog', { name: 'Delivery' });
    const attempts = pane.getByRole('table', { name: 'Attempts' });
    await attempts.waitFor({ timeout: UI_TIMEOUT });
    const listed = await tableRows(attempts);
    expect(listed.map((r) => [r[0], r[2]])).toEqual([1, 2, 3, 4].map((n) => [String(n), 'HTTP 500']));
    expect(await pane.getByTestId('delivery-why').textContent()).toBe('Failed: HTTP 500. No more retries: use Resend to try again.');

    // Resending a dead letter asks first; the receiver is back up, so it is delivered.
    failing.delete(path);
    await pane.getByRole('button', { name: 'Resend' }).click();
    const ask = confirmDialog(page, 'Resend this delivery?');
    expect(await ask.textContent()).toContain('Your receiver gets this event again now');
    await ask.getByRole('button', { name: 'Resend' }).click();
    await pane.locator('[data-status="DELIVERED"]').waitFor({ timeout: UI_TIMEOUT });
    expect((await tableRows(attempts)).map((r) => r[2])).toEqual(['HTTP 500', 'HTTP 500', 'HTTP 500', 'HTTP 500', 'HTTP 200']);
    await pane.getByRole('button', { name: 'Close' }).click();

    // Rotating the secret asks; the new secret is shown once, on this endpoint's page only.
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await confirmDialog(page, 'Rotate the signing secret?').getByRole('button', { name: 'Rotate secret' }).click();
    const secret = page.getByTestId('secret-once');
    await secret.waitFor({ timeout: UI_TIMEOUT });
    expect(await secret.textContent()).toMatch(/^Signing secret of Recetor em baixo \(new\) \(shown once, copy it now\): whsec_/);
    await page.goto(`${server.baseUrl}/dashboard/webhooks/${naive.id}`);
    await page.getByRole('heading', { level: 1, name: 'Recetor ingénuo' }).waitFor({ timeout: UI_TIMEOUT });
    expect(await page.getByTestId('secret-once').count()).toBe(0);
    expect(unexpectedErrors(errors)).toEqual([]);
    await page.close();
  });

  // Last: it stops this file's gateway (a second gateway cannot start in the same process).
  it('a failed load says so in words, never an empty list', async () => {
    const account = await createAccount(server.baseUrl, 'Loja Offline');
    const endpoint = await createEndpoint(account.api, `${receiver.url}/offline/${account.id}`, { name: 'Recetor' });
    const { page, errors } = await signedIn(account);
    await page.goto(`${server.baseUrl}/dashboard/webhooks/${endpoint.id}`);
    await page.getByText('No deliveries yet').waitFor({ timeout: UI_TIMEOUT });
    stopped = true;
    await server.stop();
    await page.getByRole('button', { name: 'Refresh' }).click();
    const alert = page.locator('.load-failed').first();
    await alert.waitFor({ timeout: UI_TIMEOUT });
    expect(await alert.textContent()).toMatch(/^Could not load (the deliveries|this endpoint): the gateway did not answer\./);
    expect(await page.getByText('No deliveries yet').count()).toBe(0);
    expect(unexpectedErrors(errors).filter((e) => !/Failed to fetch|ERR_CONNECTION_REFUSED|WebSocket/.test(e))).toEqual([]);
    await page.close();
  });
});
