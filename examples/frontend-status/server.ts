// The merchant's server for the checkout page: the only place that holds the secret key. It creates the
// express payment for an order, mints a client token for that one payment, and serves the page with the
// payment id and the token. Run by main.ts; the tests start it with startCheckoutServer.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import express from 'express';
import { createClient, PgwError } from '@pgw/client';
import { transportOf, type CheckoutConfig } from './config';

const here = path.dirname(fileURLToPath(import.meta.url));

export interface CheckoutServerOptions {
  /** The gateway's root URL, as the customer's browser reaches it. */
  gatewayUrl: string;
  /** The shop's secret key (sk_test_…): used here, never sent to the page. */
  secretKey: string;
  /** Port to listen on (0: any free one). */
  port?: number;
  host?: string;
}

export interface CheckoutServer {
  url: string;
  close(): Promise<void>;
}

interface Order {
  id: string;
  amount: number;
  paymentId: string;
}

const SHOP = 'Loja Kianda';
const AMOUNT = 5000;
/** The customer has this long to confirm in the app; a reload mints a fresh token. */
const TOKEN_SECONDS = 15 * 60;

export async function startCheckoutServer(options: CheckoutServerOptions): Promise<CheckoutServer> {
  const pgw = createClient({ baseUrl: options.gatewayUrl, apiKey: options.secretKey });
  const orders = new Map<string, Order>();
  // The page's script, graphql-ws and graphql-sse's client, bundled for browsers once at start (no CDN,
  // nothing at request time).
  const bundled = await build({
    entryPoints: [path.join(here, 'page.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome100', 'firefox100', 'safari15'],
    minify: true,
    write: false,
    logLevel: 'silent',
  });
  const script = bundled.outputFiles[0]!.text;
  const css = await readFile(path.join(here, 'page.css'), 'utf8');
  const gateway = new URL(options.gatewayUrl);
  const graphqlWsUrl = `${gateway.protocol === 'https:' ? 'wss:' : 'ws:'}//${gateway.host}/graphql`;
  // The page talks to the gateway only (GraphQL over SSE and the REST stream: its origin; the WebSocket:
  // ws(s):// of the same host); no inline script runs (the config is a JSON data block).
  const csp = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `connect-src ${gateway.origin} ${new URL(graphqlWsUrl).origin}`,
    "img-src 'self' data:",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');

  const app = express();
  app.disable('x-powered-by');
  app.use((_req, res, next) => {
    res.set({ 'Content-Security-Policy': csp, 'Referrer-Policy': 'no-referrer', 'X-Content-Type-Options': 'nosniff' });
    next();
  });
  app.get('/assets/checkout.js', (_req, res) => void res.type('text/javascript').send(script));
  app.get('/assets/checkout.css', (_req, res) => void res.type('text/css').send(css));
  app.get('/', (req, res) => void res.type('html').send(orderPage(transportQuery(req.query.transport))));

  app.post('/orders', express.urlencoded({ extended: false }), async (req, res) => {
    const mobile = String((req.body as Record<string, unknown> | undefined)?.mobile ?? '').replace(/\s+/g, '');
    const order: Omit<Order, 'paymentId'> = { id: randomBytes(4).toString('hex').toUpperCase(), amount: AMOUNT };
    try {
      const { data: payment } = await pgw.POST('/payment_intents', {
        // One key per order: a retried request (here or in the client) never charges the customer twice.
        params: { header: { 'Idempotency-Key': `order-${order.id}` } },
        body: {
          amount: order.amount,
          currency: 'AOA',
          payment_method: 'multicaixa_express',
          customer: { mobile },
          merchant_reference: `order-${order.id}`,
        },
      });
      orders.set(order.id, { ...order, paymentId: payment.id });
      res.redirect(303, `/orders/${order.id}${transportQuery(req.query.transport)}`);
    } catch (err) {
      if (!(err instanceof PgwError) || err.status >= 500) throw err;
      // invalid_phone_number and the like: the form again, with the gateway's message.
      res.status(400).type('html').send(orderPage(transportQuery(req.query.transport), err.message, mobile));
    }
  });

  app.get('/orders/:id', async (req, res) => {
    const order = orders.get(req.params.id);
    if (!order) return void res.status(404).type('text').send('No such order');
    // A token for this payment only, minted with the secret key here, each time the page is served.
    const { data: token } = await pgw.POST('/client_tokens', { body: { payment_intent: order.paymentId, expires_in: TOKEN_SECONDS } });
    const config: CheckoutConfig = {
      gatewayUrl: gateway.origin,
      graphqlWsUrl,
      paymentId: order.paymentId,
      clientToken: token.token,
      transport: transportOf(req.query.transport),
    };
    // The page carries a token: no cache may keep it.
    res.set('Cache-Control', 'no-store').type('html').send(statusPage(order, config));
  });

  const server = app.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * `?transport=…` for the next URL, so that a choice made on the shop page (`/?transport=graphql-sse`)
 * reaches the status page through the form and its redirect; empty for the default.
 */
function transportQuery(value: unknown): string {
  const transport = transportOf(value);
  return transport === 'websocket' ? '' : `?transport=${transport}`;
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const kwanza = (amount: number) => new Intl.NumberFormat('pt-AO', { style: 'currency', currency: 'AOA' }).format(amount);

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · ${SHOP}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/checkout.css">
</head>
<body>
${body}
</body>
</html>
`;
}

function orderPage(query: string, error?: string, mobile = ''): string {
  return layout(
    'Checkout',
    `<main class="checkout">
  <p class="shop">${SHOP}</p>
  <h1>Your order</h1>
  <p class="amount">${escapeHtml(kwanza(AMOUNT))}</p>
  <form method="post" action="/orders${escapeHtml(query)}">
    <label for="mobile">Multicaixa Express mobile number</label>
    <input id="mobile" name="mobile" type="tel" inputmode="numeric" autocomplete="tel-national" placeholder="923 000 000" required value="${escapeHtml(mobile)}"${error ? ' aria-describedby="form-error" aria-invalid="true"' : ''}>
    ${error ? `<p id="form-error" class="error" role="alert">${escapeHtml(error)}</p>` : ''}
    <button type="submit">Pay with Multicaixa Express</button>
  </form>
</main>`,
  );
}

function statusPage(order: Order, config: CheckoutConfig): string {
  // `<` escaped so that nothing in the values can close the data block.
  const json = JSON.stringify(config).replace(/</g, '\\u003c');
  return layout(
    `Order ${order.id}`,
    `<main class="checkout" id="checkout" data-state="waiting">
  <p class="shop">${SHOP}</p>
  <h1>Order ${escapeHtml(order.id)}</h1>
  <p class="amount">${escapeHtml(kwanza(order.amount))}</p>
  <section class="status" id="payment-status" role="status" aria-live="polite" aria-atomic="true">
    <span class="status-icon" aria-hidden="true"></span>
    <p class="status-title" id="status-title">Confirm the payment in your Multicaixa Express app</p>
    <p class="status-detail" id="status-detail">Open the app on your phone and approve the payment. This page updates by itself.</p>
  </section>
  <p class="live" id="live-channel" data-channel="connecting">Connecting to live updates…</p>
  <p><a id="retry" href="/" hidden>Try again</a></p>
</main>
<script type="application/json" id="checkout-config">${json}</script>
<script type="module" src="/assets/checkout.js"></script>`,
  );
}
