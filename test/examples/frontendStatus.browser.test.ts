// examples/frontend-status in Chromium against the real gateway: a customer orders on the merchant's page
// (its own origin), the merchant's server creates the express payment and mints a client token, and the
// page turns to paid or failed live, over the GraphQL subscription, or GraphQL over SSE when the WebSocket
// is blocked (or chosen with ?transport=graphql-sse), or the REST SSE stream when that fails too (or is
// chosen with ?transport=sse). No secret key reaches the browser.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { startCheckoutServer, type CheckoutServer } from '../../examples/frontend-status/server';
import type { CheckoutConfig, Transport } from '../../examples/frontend-status/config';
import { createAccount, type TestAccount } from '../support/accounts';
import { chromiumAvailable, launchPhoneBrowser, screenshot, warnIfNoChromium, type PhoneBrowser } from '../support/browser';
import { advanceClock, getPayment } from '../support/payments';
import { type TestServer } from '../support/server';
import { expectAxeClean, fitsPhoneWidth, LIVE_TIMEOUT, recordedTexts, recordTexts } from '../dashboard/support/dashboard';
import { sharedGateway } from '../support/server';

warnIfNoChromium('test/examples/frontendStatus.browser.test.ts (examples/frontend-status)');

const NOT_FINAL = ['PENDING', 'PROCESSING', 'UNKNOWN'];
const WAITING_TEXT = 'Confirm the payment in your Multicaixa Express app';
/** How long the page waits for a WebSocket that opened to be acknowledged (page.ts, CONNECT_TIMEOUT_MS). */
const SILENT_SOCKET_TIMEOUT_MS = 10_000;

/**
 * How a network blocks WebSockets, as the page sees it: `refused`, the socket closes before it is
 * acknowledged (a proxy that drops the upgrade); `silent`, it opens and nothing ever answers.
 */
type Block = 'refused' | 'silent';

interface CheckoutOptions {
  blockWebSocket?: Block;
  /** POST /graphql answered with a network error (GraphQL over SSE refused). */
  blockGraphqlSse?: boolean;
  /** `?transport=` on the shop page, carried to the status page; absent: the default. */
  transport?: Transport;
}

interface Checkout {
  page: Page;
  errors: string[];
  /** The status page's HTML as the merchant's server sent it. */
  html: string;
  config: CheckoutConfig;
  /** The first status the page received from the gateway (data-status). */
  firstStatus: string;
  /** URLs of the page's HTTP requests, and of the WebSockets it opened. */
  requests: string[];
  /** URLs of its POSTs (GraphQL over SSE posts to /graphql). */
  posts: string[];
  sockets: string[];
  /** How many WebSockets to /graphql the test blocked (blockWebSocket). */
  blockedSockets: number;
}

describe.skipIf(!chromiumAvailable)('examples/frontend-status: a checkout page shows its payment live with a client token', () => {
  let server: TestServer;
  let browser: PhoneBrowser;
  let merchant: TestAccount;
  let example: CheckoutServer;

  beforeAll(async () => {
    server = await sharedGateway();
    merchant = await createAccount(server.baseUrl, 'Loja Kianda');
    example = await startCheckoutServer({ gatewayUrl: server.baseUrl, secretKey: merchant.sk });
    browser = await launchPhoneBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await example?.close();
    await server?.stop();
  });

  /** Orders through the shop's form, as a customer does, and waits for the first status the page receives. */
  async function checkout(mobile: string, { blockWebSocket, blockGraphqlSse, transport }: CheckoutOptions = {}): Promise<Checkout> {
    const { page, errors } = await browser.newPage();
    const requests: string[] = [];
    const posts: string[] = [];
    const sockets: string[] = [];
    page.on('request', (req) => {
      requests.push(req.url());
      if (req.method() === 'POST') posts.push(req.url());
    });
    page.on('websocket', (ws) => sockets.push(ws.url()));
    const result = { page, errors, requests, posts, sockets, blockedSockets: 0 };
    let socketBlocked!: () => void;
    const blocked = new Promise<void>((resolve) => (socketBlocked = resolve));
    if (blockWebSocket) {
      // Never connected to the gateway: the route answers in its place (silent: not at all).
      await page.routeWebSocket(/\/graphql$/, (ws) => {
        result.blockedSockets++;
        socketBlocked();
        if (blockWebSocket === 'refused') void ws.close();
      });
    }
    // A silent socket is given up by the page's own timer (CONNECT_TIMEOUT_MS in page.ts): the page's
    // clock is moved past it below rather than waited for (it ticks as usual meanwhile).
    if (blockWebSocket === 'silent') await page.clock.install();
    if (blockGraphqlSse) {
      await page.route(`${server.baseUrl}/graphql`, (route) => (route.request().method() === 'POST' ? route.abort('connectionrefused') : route.fallback()));
    }
    await page.goto(transport ? `${example.url}/?transport=${transport}` : example.url);
    await page.getByLabel('Multicaixa Express mobile number').fill(mobile);
    const [response] = await Promise.all([
      page.waitForResponse((res) => /\/orders\/[0-9A-F]+(\?transport=[a-z-]+)?$/.test(res.url())),
      page.getByRole('button', { name: 'Pay with Multicaixa Express' }).click(),
    ]);
    const html = await response.text();
    if (blockWebSocket === 'silent') {
      // The page set its timer before it opened the socket: once the socket is open, 10 s are up.
      await blocked;
      await page.clock.fastForward(SILENT_SOCKET_TIMEOUT_MS);
    }
    await page.locator('#checkout[data-status]').waitFor({ timeout: LIVE_TIMEOUT });
    const firstStatus = (await page.locator('#checkout').getAttribute('data-status'))!;
    const config = JSON.parse((await page.locator('#checkout-config').textContent())!) as CheckoutConfig;
    return { ...result, html, config, firstStatus };
  }

  /**
   * A checkout whose page received a status that is not final yet, so that the final one can only arrive
   * live. The rail moves in real time too (final at +5 s): on a machine slow enough for the page to open
   * after that, a new order is made (3 tries at most).
   */
  async function liveCheckout(mobile: string, options: CheckoutOptions = {}): Promise<Checkout> {
    for (let attempt = 1; ; attempt++) {
      const c = await checkout(mobile, options);
      if (NOT_FINAL.includes(c.firstStatus) || attempt === 3) {
        expect(NOT_FINAL, `first status received on attempt ${attempt}`).toContain(c.firstStatus);
        await recordTexts(c.page, '[role="status"]');
        return c;
      }
      await c.page.close();
    }
  }

  function expectNoSecrets(c: Checkout): void {
    expect(c.html).not.toContain(merchant.sk);
    expect(c.html).not.toMatch(/sk_test_|pk_test_/);
    expect(Object.keys(c.config).sort()).toEqual(['clientToken', 'gatewayUrl', 'graphqlWsUrl', 'paymentId', 'transport']);
    expect(c.config.clientToken).toMatch(/^ct_test_/);
  }

  const graphqlSsePosts = (c: Checkout) => c.posts.filter((url) => url === `${server.baseUrl}/graphql`);
  const sseRequests = (c: Checkout) => c.requests.filter((url) => url.includes(`/v1/public/payments/${c.config.paymentId}/events?client_token=`));

  /**
   * Moves the account's sandbox clock past the rail's outcome (+5 s) and waits for the page to show it;
   * the same document showed "confirm" first (no reload). Resolves with the payment as the API reads it.
   */
  async function settle(c: Checkout, state: 'paid' | 'failed', title: string): Promise<any> {
    await advanceClock(merchant.api, 10);
    await c.page.locator(`#checkout[data-state="${state}"]`).waitFor({ timeout: LIVE_TIMEOUT });
    const texts = await recordedTexts(c.page);
    expect(texts[0]).toContain(WAITING_TEXT);
    expect(texts.at(-1)).toContain(title);
    return getPayment(merchant.api, c.config.paymentId);
  }

  /** What the page must hold in each state: it fits the phone, axe finds nothing serious, nothing was logged as an error. */
  async function expectSoundPage(c: Checkout, name: string): Promise<void> {
    expect(await fitsPhoneWidth(c.page)).toBe(true);
    await expectAxeClean(c.page, name);
    await screenshot(c.page, name);
    expect(c.errors).toEqual([]);
  }

  it('923000000: shows "confirm in the app", then paid live over the GraphQL subscription', async () => {
    const c = await liveCheckout('923000000');
    expect(new URL(example.url).origin).not.toBe(new URL(server.baseUrl).origin);
    expectNoSecrets(c);
    expect(c.config.paymentId).toMatch(/^pay_/);
    const status = c.page.getByRole('status');
    await expect(status.getAttribute('aria-live')).resolves.toBe('polite');
    await expect(status.textContent()).resolves.toContain(WAITING_TEXT);
    await c.page.locator('#live-channel[data-channel="websocket"]').waitFor({ timeout: LIVE_TIMEOUT });
    await expectSoundPage(c, 'frontend-status-waiting');

    expect((await settle(c, 'paid', 'Payment received')).status).toBe('SUCCEEDED');
    await expect(status.textContent()).resolves.toContain('Thank you');
    // Over the subscription only, never through the SSE stream.
    expect(c.sockets).toEqual([c.config.graphqlWsUrl]);
    expect(sseRequests(c)).toEqual([]);
    await expectSoundPage(c, 'frontend-status-paid');
    await c.page.close();
  }, 180_000);

  it('923000001 (the customer rejects it): shows failed live, with the reason and a way to try again', async () => {
    const c = await liveCheckout('923000001');
    expectNoSecrets(c);
    await c.page.locator('#live-channel[data-channel="websocket"]').waitFor({ timeout: LIVE_TIMEOUT });
    await expect(c.page.getByRole('link', { name: 'Try again' }).isVisible()).resolves.toBe(false);

    const payment = await settle(c, 'failed', 'Payment failed');
    expect([payment.status, payment.failure_code]).toEqual(['FAILED', 'rejected_by_customer']);
    await expect(c.page.getByRole('status').textContent()).resolves.toContain('declined in the Multicaixa Express app');
    await expect(c.page.getByRole('link', { name: 'Try again' }).isVisible()).resolves.toBe(true);
    expect(sseRequests(c)).toEqual([]);
    await expectSoundPage(c, 'frontend-status-failed');
    await c.page.close();
  }, 180_000);

  it('with WebSockets refused, falls back to GraphQL over SSE and still shows paid live', async () => {
    const c = await liveCheckout('923000000', { blockWebSocket: 'refused' });
    expectNoSecrets(c);
    await c.page.locator('#live-channel[data-channel="graphql-sse"]').waitFor({ timeout: LIVE_TIMEOUT });
    expect(c.blockedSockets).toBe(1);
    expect(graphqlSsePosts(c)).toHaveLength(1);
    expect(sseRequests(c)).toEqual([]);

    expect((await settle(c, 'paid', 'Payment received')).status).toBe('SUCCEEDED');
    await expect(c.page.locator('#live-channel').getAttribute('data-channel')).resolves.toBe('graphql-sse');
    await expectSoundPage(c, 'frontend-status-paid-over-graphql-sse-fallback');
    await c.page.close();
  }, 180_000);

  it('with WebSockets and GraphQL over SSE refused, falls back to the REST stream and still shows paid live', async () => {
    const c = await liveCheckout('923000000', { blockWebSocket: 'refused', blockGraphqlSse: true });
    await c.page.locator('#live-channel[data-channel="sse"]').waitFor({ timeout: LIVE_TIMEOUT });
    expect(c.blockedSockets).toBe(1);
    expect(graphqlSsePosts(c)).toHaveLength(1);
    expect(sseRequests(c)).toHaveLength(1);

    expect((await settle(c, 'paid', 'Payment received')).status).toBe('SUCCEEDED');
    await expect(c.page.locator('#live-channel').getAttribute('data-channel')).resolves.toBe('sse');
    // Chromium logs the refused POST itself as a console error; the page must have logged nothing else.
    c.errors = c.errors.filter((e) => !/^Failed to load resource: net::ERR_CONNECTION_REFUSED$/.test(e));
    await expectSoundPage(c, 'frontend-status-paid-over-sse');
    await c.page.close();
  }, 180_000);

  it('with a WebSocket that opens and never answers, takes GraphQL over SSE once its 10 s are up', async () => {
    // The rail may be final by then (+5 s): this one shows the fallback reaching paid, the test above that
    // it follows the stream live.
    const c = await checkout('923000000', { blockWebSocket: 'silent' });
    await advanceClock(merchant.api, 10);
    await c.page.locator('#checkout[data-state="paid"]').waitFor({ timeout: LIVE_TIMEOUT });
    await expect(c.page.locator('#live-channel').getAttribute('data-channel')).resolves.toBe('graphql-sse');
    expect(c.blockedSockets).toBe(1);
    expect(graphqlSsePosts(c)).toHaveLength(1);
    expect(sseRequests(c)).toEqual([]);
    expect((await getPayment(merchant.api, c.config.paymentId)).status).toBe('SUCCEEDED');
    await expectSoundPage(c, 'frontend-status-paid-over-graphql-sse-silent');
    await c.page.close();
  }, 180_000);

  describe('?transport=graphql-sse: GraphQL over SSE from the start', () => {
    async function expectOverGraphqlSse(c: Checkout): Promise<void> {
      expectNoSecrets(c);
      expect(c.config.transport).toBe('graphql-sse');
      const channel = c.page.locator('#live-channel[data-channel="graphql-sse"]');
      await channel.waitFor({ timeout: LIVE_TIMEOUT });
      await expect(channel.textContent()).resolves.toBe('Live updates over GraphQL over SSE.');
    }
    /** Nothing but GraphQL over SSE carried it: no WebSocket, no REST stream, one POST /graphql. */
    function expectOnlyGraphqlSse(c: Checkout): void {
      expect(c.sockets).toEqual([]);
      expect(sseRequests(c)).toEqual([]);
      expect(graphqlSsePosts(c)).toHaveLength(1);
    }

    it('923000000: paid live', async () => {
      const c = await liveCheckout('923000000', { transport: 'graphql-sse' });
      await expectOverGraphqlSse(c);
      expect((await settle(c, 'paid', 'Payment received')).status).toBe('SUCCEEDED');
      await expect(c.page.getByRole('status').textContent()).resolves.toContain('Thank you');
      expectOnlyGraphqlSse(c);
      await expectSoundPage(c, 'frontend-status-paid-graphql-sse');
      await c.page.close();
    }, 180_000);

    it('923000001: failed live, with the reason', async () => {
      const c = await liveCheckout('923000001', { transport: 'graphql-sse' });
      await expectOverGraphqlSse(c);
      const payment = await settle(c, 'failed', 'Payment failed');
      expect([payment.status, payment.failure_code]).toEqual(['FAILED', 'rejected_by_customer']);
      await expect(c.page.getByRole('status').textContent()).resolves.toContain('declined in the Multicaixa Express app');
      await expect(c.page.getByRole('link', { name: 'Try again' }).isVisible()).resolves.toBe(true);
      expectOnlyGraphqlSse(c);
      await expectSoundPage(c, 'frontend-status-failed-graphql-sse');
      await c.page.close();
    }, 180_000);
  });

  it('?transport=sse: goes straight to the REST stream', async () => {
    const c = await liveCheckout('923000000', { transport: 'sse' });
    expectNoSecrets(c);
    expect(c.config.transport).toBe('sse');
    await c.page.locator('#live-channel[data-channel="sse"]').waitFor({ timeout: LIVE_TIMEOUT });
    expect((await settle(c, 'paid', 'Payment received')).status).toBe('SUCCEEDED');
    expect(c.sockets).toEqual([]);
    expect(graphqlSsePosts(c)).toEqual([]);
    expect(sseRequests(c)).toHaveLength(1);
    await c.page.close();
  }, 180_000);
});
