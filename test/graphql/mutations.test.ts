import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, idempotencyKey } from '../support/accounts';
import { startReceiver, type Receiver } from '../support/receiver';
import { type TestServer } from '../support/server';
import { errorCodes, gql, gqlData, INTENT_FIELDS, until } from './support';
import { sharedGateway } from '../support/server';

/** Every mutation once, its error paths with the REST codes, idempotency shared with REST, batching. */
let server: TestServer;
let baseUrl: string;
let receiver: Receiver;
let receiverUrl: string;

beforeAll(async () => {
  server = await sharedGateway();
  baseUrl = server.baseUrl;
  receiver = await startReceiver();
  receiverUrl = `${receiver.url}/hooks`;
});
afterAll(async () => {
  await server?.stop();
  await receiver?.close();
});

const m = (sk: string, query: string, variables?: Record<string, unknown>) => gqlData(baseUrl, sk, query, variables);

describe('each mutation succeeds once', () => {
  it('payment intents, references, refunds and the sandbox clock', async () => {
    const acct = await createAccount(baseUrl);
    const ref = await m(acct.sk, `mutation($key: String!) {
      createPaymentIntent(idempotencyKey: $key, input: { amount: 25000, currency: "AOA", paymentMethod: MULTICAIXA_REFERENCE, merchantReference: "order-1", metadata: { order_id: "1" } }) { ${INTENT_FIELDS} }
    }`, { key: idempotencyKey() });
    const intent = ref.createPaymentIntent;
    expect(intent).toMatchObject({ status: 'PENDING', paymentMethod: 'MULTICAIXA_REFERENCE', merchantReference: 'order-1', metadata: { order_id: '1' }, currency: 'AOA' });
    expect(intent.reference.number).toMatch(/^\d{9}$/);

    const paid = await m(acct.sk, `mutation($r: String!) { simulateReferencePaid(input: { reference: $r }) { id status fee feeVersion } }`, { r: intent.reference.number });
    expect(paid.simulateReferencePaid).toEqual({ id: intent.id, status: 'SUCCEEDED', fee: 500, feeVersion: 1 });

    const refund = await m(acct.sk, `mutation($id: ID!, $key: String!) {
      createRefund(idempotencyKey: $key, input: { paymentIntent: $id, amount: 5000 }) { id paymentIntentId amount status paymentIntent { id status } }
    }`, { id: intent.id, key: idempotencyKey() });
    expect(refund.createRefund).toMatchObject({ paymentIntentId: intent.id, amount: 5000, status: 'PENDING', paymentIntent: { id: intent.id } });
    expect(refund.createRefund.id).toMatch(/^rf_/);

    const clock = await m(acct.sk, 'mutation { advanceSandboxClock(input: { seconds: 10 }) { now offsetSeconds } }');
    expect(clock.advanceSandboxClock.offsetSeconds).toBe(10);
    const after = await m(acct.sk, `query($id: ID!) { sandboxClock { offsetSeconds } paymentIntent(id: $id) { status amountRefunded refunds { id status } events { type } } }`, { id: intent.id });
    expect(after.sandboxClock.offsetSeconds).toBe(10);
    expect(after.paymentIntent).toMatchObject({ status: 'PARTIALLY_REFUNDED', amountRefunded: 5000, refunds: [{ id: refund.createRefund.id, status: 'SUCCEEDED' }] });
    expect(after.paymentIntent.events.map((e: { type: string }) => e.type)).toEqual(['PAYMENT_CREATED', 'REFERENCE_PAID', 'PAYMENT_SUCCEEDED', 'REFUND_SUCCEEDED']);

    const another = await acct.api.post('/payment_intents', { amount: 1000, currency: 'AOA', payment_method: 'multicaixa_reference' }, { idempotencyKey: idempotencyKey() });
    const cancelled = await m(acct.sk, 'mutation($id: ID!) { cancelPaymentIntent(id: $id) { id status } }', { id: another.body.id });
    expect(cancelled.cancelPaymentIntent).toEqual({ id: another.body.id, status: 'CANCELLED' });
  });

  it('payment links, QR codes and checkout sessions', async () => {
    const acct = await createAccount(baseUrl);
    const link = (await m(acct.sk, 'mutation { createPaymentLink(input: { amount: 7500, description: "Camisola", methods: [MULTICAIXA_EXPRESS] }) { id code url amount methods description active } }')).createPaymentLink;
    expect(link).toMatchObject({ amount: 7500, methods: ['MULTICAIXA_EXPRESS'], description: 'Camisola', active: true });
    expect(link.url).toBe(`${new URL(link.url).origin}/pay/${link.code}`);

    const byCode = (await m(acct.sk, 'mutation($code: String!) { createQrCode(input: { paymentLink: $code }) { id paymentLinkCode url svg livemode } }', { code: link.code })).createQrCode;
    expect(byCode).toMatchObject({ paymentLinkCode: link.code, url: link.url, livemode: false });
    expect(byCode.svg).toContain('<svg');
    const byAmount = (await m(acct.sk, 'mutation { createQrCode(input: { amount: 1200, description: "Bolo" }) { paymentLinkCode } }')).createQrCode;
    expect(byAmount.paymentLinkCode).toMatch(/^[0-9A-Za-z]{8}$/);
    expect(byAmount.paymentLinkCode).not.toBe(link.code);

    const off = (await m(acct.sk, 'mutation($id: ID!) { deactivatePaymentLink(id: $id) { id active } }', { id: link.id })).deactivatePaymentLink;
    expect(off).toEqual({ id: link.id, active: false });
    const links = (await m(acct.sk, '{ paymentLinks { id active } }')).paymentLinks;
    expect(links).toHaveLength(2);

    const session = (await m(acct.sk, `mutation { createCheckoutSession(input: { amount: 32000, merchantReference: "order-2001", successUrl: "https://shop.example/ok", cancelUrl: "https://shop.example/cart" }) {
      id url status methods merchantReference successUrl cancelUrl paymentIntentId paymentIntent { id } expiresAt createdAt } }`)).createCheckoutSession;
    expect(session).toMatchObject({ status: 'OPEN', methods: ['MULTICAIXA_EXPRESS', 'MULTICAIXA_REFERENCE'], merchantReference: 'order-2001', paymentIntentId: null, paymentIntent: null });
    expect(Date.parse(session.expiresAt) - Date.parse(session.createdAt)).toBe(30 * 60_000);
    const read = (await m(acct.sk, 'query($id: ID!) { checkoutSession(id: $id) { id status } }', { id: session.id })).checkoutSession;
    expect(read).toEqual({ id: session.id, status: 'OPEN' });
  });

  it('webhook endpoints: create, test, deliveries, retry, rotate, delete', async () => {
    const acct = await createAccount(baseUrl);
    const endpoint = (await m(acct.sk, 'mutation($url: String!) { createWebhookEndpoint(input: { url: $url, name: "shop" }) { id url events name secret deliveries { id } } }', { url: receiverUrl })).createWebhookEndpoint;
    expect(endpoint).toMatchObject({ url: receiverUrl, events: ['*'], name: 'shop', deliveries: [] });
    expect(endpoint.secret).toMatch(/^whsec_/);
    // The secret is shown once: reading the endpoint again gives null.
    const listed = (await m(acct.sk, '{ webhookEndpoints { id secret } }')).webhookEndpoints;
    expect(listed).toEqual([{ id: endpoint.id, secret: null }]);

    const test = (await m(acct.sk, 'mutation($id: ID!) { sendTestWebhook(id: $id) { eventId state } }', { id: endpoint.id })).sendTestWebhook;
    expect(test.state).toBe('QUEUED');
    const delivered = await until(async () => {
      const d = (await m(acct.sk, '{ webhookEndpoints { deliveries { id eventId eventType state attempts lastStatus requestBody signatureHeader } } }')).webhookEndpoints[0].deliveries;
      return d[0]?.state === 'DELIVERED' ? d[0] : null;
    });
    expect(delivered).toMatchObject({ eventId: test.eventId, eventType: 'TEST_PING', attempts: 1, lastStatus: 200 });
    expect(receiver.received.some((r) => r.headers['service-event-id'] === test.eventId)).toBe(true);

    const retried = (await m(acct.sk, 'mutation($e: ID!, $d: ID!) { retryWebhookDelivery(endpointId: $e, deliveryId: $d) { id state attempts } }', { e: endpoint.id, d: delivered.id })).retryWebhookDelivery;
    expect(retried).toEqual({ id: delivered.id, state: 'DELIVERED', attempts: 2 });

    const rotated = (await m(acct.sk, 'mutation($id: ID!) { rotateWebhookSecret(id: $id) { id secret } }', { id: endpoint.id })).rotateWebhookSecret;
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(endpoint.secret);

    const deleted = (await m(acct.sk, 'mutation($id: ID!) { deleteWebhookEndpoint(id: $id) { id deleted } }', { id: endpoint.id })).deleteWebhookEndpoint;
    expect(deleted).toEqual({ id: endpoint.id, deleted: true });
    expect(errorCodes(await gql(baseUrl, acct.sk, 'mutation($id: ID!) { deleteWebhookEndpoint(id: $id) { id } }', { id: endpoint.id }))).toEqual(['resource_not_found']);
  });

  it('API keys: create and revoke (full secret key only); logs and events list the account\'s activity', async () => {
    const acct = await createAccount(baseUrl);
    const key = (await m(acct.sk, 'mutation { createApiKey(input: { name: "ops", permissions: [LOGS_READ, EVENTS_WRITE] }) { id type name permissions secret revokedAt } }')).createApiKey;
    expect(key).toMatchObject({ type: 'RESTRICTED', name: 'ops', permissions: ['EVENTS_WRITE', 'LOGS_READ'], revokedAt: null });
    const keys = (await m(acct.sk, '{ apiKeys { id type secret last4 } }')).apiKeys as Array<{ id: string; type: string; secret: string | null; last4: string }>;
    expect(keys.map((k) => k.type).sort()).toEqual(['PUBLISHABLE', 'RESTRICTED', 'SECRET']);
    expect(keys.every((k) => k.secret === null && /^[0-9A-Za-z]{4}$/.test(k.last4))).toBe(true);
    // events:write implies events:read.
    expect((await gql(baseUrl, key.secret, '{ events(first: 1) { nodes { id } } }')).body.errors).toBeUndefined();
    const logs = (await m(key.secret, '{ logs(first: 5) { requestId method path status errorCode } }')).logs;
    expect(logs.some((l: { path: string; method: string }) => l.path === '/graphql' && l.method === 'POST')).toBe(true);
    expect(errorCodes(await gql(baseUrl, key.secret, 'mutation($id: ID!) { revokeApiKey(id: $id) { id } }', { id: key.id }))).toEqual(['permission_denied']);
    const revoked = (await m(acct.sk, 'mutation($id: ID!) { revokeApiKey(id: $id) { id revokedAt } }', { id: key.id })).revokeApiKey;
    expect(revoked.revokedAt).not.toBeNull();
  });
});

describe('error paths give the REST codes', () => {
  it('refunds, links, QR codes, sessions, webhooks, clock and keys', async () => {
    const acct = await createAccount(baseUrl);
    const pending = await acct.api.post('/payment_intents', { amount: 1000, currency: 'AOA', payment_method: 'multicaixa_reference' }, { idempotencyKey: idempotencyKey() });
    const refund = `mutation($id: ID!, $amount: Int, $key: String!) { createRefund(idempotencyKey: $key, input: { paymentIntent: $id, amount: $amount }) { id } }`;
    expect(errorCodes(await gql(baseUrl, acct.sk, refund, { id: pending.body.id, key: idempotencyKey() }))).toEqual(['payment_already_processed']);
    await acct.api.post('/sandbox/simulate/reference_paid', { reference: pending.body.reference.number });
    expect(errorCodes(await gql(baseUrl, acct.sk, refund, { id: pending.body.id, amount: 5000, key: idempotencyKey() }))).toEqual(['amount_out_of_range']);
    expect(errorCodes(await gql(baseUrl, acct.sk, refund, { id: pending.body.id, amount: 0, key: idempotencyKey() }))).toEqual(['invalid_request']);
    expect(errorCodes(await gql(baseUrl, acct.sk, refund, { id: 'pay_nope', key: idempotencyKey() }))).toEqual(['resource_not_found']);
    expect(errorCodes(await gql(baseUrl, acct.sk, `mutation { simulateReferencePaid(input: { reference: "12" }) { id } }`))).toEqual(['invalid_request']);

    expect(errorCodes(await gql(baseUrl, acct.sk, 'mutation { createPaymentLink(input: { amount: 50 }) { id } }'))).toEqual(['amount_out_of_range']);
    expect(errorCodes(await gql(baseUrl, acct.sk, 'mutation { createPaymentLink(input: { amount: 5000, methods: [KWIK] }) { id } }'))).toEqual(['method_disabled']);
    expect(errorCodes(await gql(baseUrl, acct.sk, `mutation { createPaymentLink(input: { amount: 5000, description: "${'x'.repeat(141)}" }) { id } }`))).toEqual(['invalid_request']);
    expect(errorCodes(await gql(baseUrl, acct.sk, 'mutation { createQrCode(input: { amount: 5000, paymentLink: "abcdefgh" }) { id } }'))).toEqual(['invalid_request']);
    expect(errorCodes(await gql(baseUrl, acct.sk, 'mutation { createQrCode(input: { paymentLink: "abcdefgh" }) { id } }'))).toEqual(['resource_not_found']);
    expect(errorCodes(await gql(baseUrl, acct.sk, 'mutation { createCheckoutSession(input: { amount: 1000, successUrl: "not a url" }) { id } }'))).toEqual(['invalid_request']);
    expect(errorCodes(await gql(baseUrl, acct.sk, 'mutation { createWebhookEndpoint(input: { url: "ftp://example.com/x" }) { id } }'))).toEqual(['invalid_request']);
    expect(errorCodes(await gql(baseUrl, acct.sk, 'mutation { createWebhookEndpoint(input: { url: "https://example.com/x", events: ["payment.exploded"] }) { id } }'))).toEqual(['invalid_request']);
    expect(errorCodes(await gql(baseUrl, acct.sk, 'mutation { advanceSandboxClock(input: { seconds: 0 }) { now } }'))).toEqual(['invalid_request']);
    expect(errorCodes(await gql(baseUrl, acct.sk, 'mutation { createApiKey(input: { name: "", permissions: [LOGS_READ] }) { id } }'))).toEqual(['invalid_request']);
    expect(errorCodes(await gql(baseUrl, acct.sk, 'mutation { sendTestWebhook(id: "whe_nope") { eventId } }'))).toEqual(['resource_not_found']);
    expect(errorCodes(await gql(baseUrl, acct.pk, 'mutation { createPaymentLink(input: { amount: 5000 }) { id } }'))).toEqual(['permission_denied']);
  });
});

describe('idempotency is shared with REST', () => {
  const CREATE = `mutation($key: String!, $input: CreatePaymentIntentInput!) { createPaymentIntent(idempotencyKey: $key, input: $input) { id amount } }`;

  it('a key used over REST replays over GraphQL with the same intent, and the other way round', async () => {
    const acct = await createAccount(baseUrl);
    const key = idempotencyKey();
    const rest = await acct.api.post('/payment_intents', { amount: 4321, currency: 'AOA', payment_method: 'multicaixa_reference' }, { idempotencyKey: key });
    const replay = await m(acct.sk, CREATE, { key, input: { amount: 4321, currency: 'AOA', paymentMethod: 'MULTICAIXA_REFERENCE' } });
    expect(replay.createPaymentIntent).toEqual({ id: rest.body.id, amount: 4321 });
    const conflict = await gql(baseUrl, acct.sk, CREATE, { key, input: { amount: 4322, currency: 'AOA', paymentMethod: 'MULTICAIXA_REFERENCE' } });
    expect(errorCodes(conflict)).toEqual(['idempotency_conflict']);

    const key2 = idempotencyKey();
    const first = await m(acct.sk, CREATE, { key: key2, input: { amount: 777, currency: 'AOA', paymentMethod: 'MULTICAIXA_EXPRESS', customer: { mobile: '923000000' }, metadata: { a: '1' } } });
    const again = await m(acct.sk, CREATE, { key: key2, input: { amount: 777, currency: 'AOA', paymentMethod: 'MULTICAIXA_EXPRESS', customer: { mobile: '923000000' }, metadata: { a: '1' } } });
    expect(again.createPaymentIntent.id).toBe(first.createPaymentIntent.id);
    const restReplay = await acct.api.post('/payment_intents', { amount: 777, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000000' }, metadata: { a: '1' } }, { idempotencyKey: key2 });
    expect(restReplay.status).toBe(201);
    expect(restReplay.headers.get('idempotency-replayed')).toBe('true');
    expect(restReplay.body.id).toBe(first.createPaymentIntent.id);
    const list = (await m(acct.sk, '{ paymentIntents(first: 10) { nodes { id } } }')).paymentIntents.nodes;
    expect(list).toHaveLength(2);

    // A stored validation error replays as the same error.
    const key3 = idempotencyKey();
    const bad = await gql(baseUrl, acct.sk, CREATE, { key: key3, input: { amount: 10, currency: 'AOA', paymentMethod: 'MULTICAIXA_REFERENCE' } });
    expect(errorCodes(bad)).toEqual(['amount_out_of_range']);
    const badRest = await acct.api.post('/payment_intents', { amount: 10, currency: 'AOA', payment_method: 'multicaixa_reference' }, { idempotencyKey: key3 });
    expect(badRest.status).toBe(400);
    expect(badRest.headers.get('idempotency-replayed')).toBe('true');

    const refundKey = idempotencyKey();
    const paid = await acct.api.post('/payment_intents', { amount: 2000, currency: 'AOA', payment_method: 'multicaixa_reference' }, { idempotencyKey: idempotencyKey() });
    await acct.api.post('/sandbox/simulate/reference_paid', { reference: paid.body.reference.number });
    const restRefund = await acct.api.post('/refunds', { payment_intent: paid.body.id, amount: 100 }, { idempotencyKey: refundKey });
    const gqlRefund = await m(acct.sk, `mutation($key: String!, $id: ID!) { createRefund(idempotencyKey: $key, input: { paymentIntent: $id, amount: 100 }) { id } }`, { key: refundKey, id: paid.body.id });
    expect(gqlRefund.createRefund.id).toBe(restRefund.body.id);
  });
});

describe('batching', () => {
  it('reads the refunds and events of a page of intents with one query each, not one per intent', async () => {
    const acct = await createAccount(baseUrl);
    for (let i = 0; i < 6; i++) {
      await acct.api.post('/payment_intents', { amount: 1000 + i, currency: 'AOA', payment_method: 'multicaixa_reference' }, { idempotencyKey: idempotencyKey() });
    }
    const queries: string[] = [];
    mongoose.set('debug', (collection: string, method: string) => {
      queries.push(`${collection}.${method}`);
    });
    let data: any;
    try {
      data = await m(acct.sk, '{ paymentIntents(first: 6) { nodes { id refunds { id } events { id type } } } }');
    } finally {
      mongoose.set('debug', false);
    }
    expect(data.paymentIntents.nodes).toHaveLength(6);
    expect(data.paymentIntents.nodes.every((n: { events: unknown[] }) => n.events.length === 1)).toBe(true);
    expect(queries.filter((q) => q === 'events.find')).toHaveLength(1);
    // One list query and one batched refunds query on payment_intents.
    expect(queries.filter((q) => q === 'payment_intents.find')).toHaveLength(2);
  });
});
