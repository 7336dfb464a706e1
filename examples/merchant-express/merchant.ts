import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { constructEvent, createClient, PgwError, WebhookSignatureError, type PgwClient } from '@pgw/client';
import { HANDLED_EVENTS, MerchantStore } from './store';

export interface MerchantOptions {
  /** The gateway's root URL (PUBLIC_BASE_URL). */
  gatewayUrl: string;
  /** The shop's secret key (sk_test_…). */
  apiKey: string;
  /**
   * Signing secrets accepted on /webhooks (the endpoint's whsec_…, and the previous one during a
   * rotation). Read at each delivery: a secret pushed after start (once the endpoint exists) counts.
   */
  webhookSecrets: string[];
  /** Where the shop keeps its records (orders, handled event ids, fulfilments). */
  dataDir: string;
  /** Port to listen on (0: any free one). */
  port?: number;
  host?: string;
}

export interface Merchant {
  url: string;
  store: MerchantStore;
  close(): Promise<void>;
}

/**
 * A small shop on top of the gateway: POST /orders starts an express payment for an order, POST
 * /webhooks receives the gateway's events and fulfils each paid order exactly once.
 */
export async function startMerchant(options: MerchantOptions): Promise<Merchant> {
  const pgw = createClient({ baseUrl: options.gatewayUrl, apiKey: options.apiKey });
  const store = new MerchantStore(options.dataDir);
  const app = express();

  // The webhook route reads the raw bytes: the signature covers exactly what was sent, and a body
  // parsed and serialised again would not match. It is declared before any JSON parser.
  app.post('/webhooks', express.raw({ type: 'application/json' }), (req, res) => {
    let event;
    try {
      event = constructEvent(req.body as Buffer, req.get('Service-Signature'), options.webhookSecrets);
    } catch (err) {
      if (err instanceof WebhookSignatureError) return void res.status(400).send(err.reason);
      throw err;
    }
    // At-least-once delivery: the same event may come again (retries, the retry route, a forwarder).
    const eventId = req.get('Service-Event-Id') ?? event.id;
    const firstTime = store.handleEventOnce(eventId, () => {
      // Only payment.succeeded confirms a payment; failed, expired and cancelled close the order. The
      // store keys on the payment (data.id) and its events' `sequence`, so neither a second event about
      // one payment nor one that arrives late can change a final order.
      const paymentId = (event.data as { id?: unknown }).id;
      if (typeof paymentId === 'string') store.applyPaymentEvent(event.type, paymentId, event.sequence);
    });
    res.status(200).send(firstTime ? 'ok' : 'duplicate');
  });

  app.post('/orders', express.json(), async (req, res) => {
    const { amount, mobile, method } = (req.body ?? {}) as { amount?: unknown; mobile?: unknown; method?: unknown };
    const byReference = method === 'reference';
    if (!Number.isInteger(amount) || (!byReference && typeof mobile !== 'string')) {
      return void res.status(400).json({ error: 'amount (integer AOA) and mobile (9 digits), or method "reference", are required' });
    }
    const orderId = `ord_${randomBytes(9).toString('base64url')}`;
    try {
      const payment = await createPayment(pgw, orderId, amount as number, byReference ? null : (mobile as string));
      store.addOrder({ id: orderId, amount: amount as number, payment_intent: payment.id, status: 'awaiting_payment', fulfilled_at: null });
      res.status(201).json({ order: orderId, payment_intent: payment.id, payment_status: payment.status });
    } catch (err) {
      if (!(err instanceof PgwError)) throw err;
      // The gateway's stable code says what went wrong (invalid_phone_number, amount_out_of_range, …).
      res.status(err.status >= 500 || err.status === 0 ? 502 : 400).json({ error: err.code, message: err.message, request_id: err.requestId });
    }
  });

  app.get('/orders/:id', (req, res) => {
    const order = store.order(req.params.id);
    if (!order) return void res.status(404).json({ error: 'no such order' });
    res.json(order);
  });

  app.get('/fulfilments', (_req, res) => {
    res.json(store.fulfilments());
  });

  app.get('/outcomes', (_req, res) => {
    res.json(store.outcomes());
  });

  const server = await new Promise<import('node:http').Server>((resolve) => {
    const s = app.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    store,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

/**
 * One payment per order (express from `mobile`, or a reference when it is null): the Idempotency-Key is
 * derived from the order, so a retry of this call (a timeout, a crash before the answer) can never
 * charge the customer twice.
 */
async function createPayment(pgw: PgwClient, orderId: string, amount: number, mobile: string | null) {
  const method = mobile === null ? { payment_method: 'multicaixa_reference' as const } : { payment_method: 'multicaixa_express' as const, customer: { mobile } };
  const { data } = await pgw.POST('/payment_intents', {
    params: { header: { 'Idempotency-Key': `order-${orderId}` } },
    body: { amount, currency: 'AOA', ...method, merchant_reference: orderId },
  });
  return data;
}

/** Registers `<merchantUrl>/webhooks` for the final payment events; returns the endpoint's id and signing secret. */
export async function registerWebhookEndpoint(gatewayUrl: string, apiKey: string, merchantUrl: string): Promise<{ id: string; secret: string }> {
  const { data } = await createClient({ baseUrl: gatewayUrl, apiKey }).POST('/webhook_endpoints', {
    body: { url: `${merchantUrl}/webhooks`, events: HANDLED_EVENTS, description: 'merchant-express example' },
  });
  return { id: data.id, secret: data.secret };
}
