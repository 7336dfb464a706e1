import { expect, it, vi } from 'vitest';
import { createAccount, type TestAccount } from '../support/accounts';
import { waitFor } from '../support/wait';
import { useGatewayAndReceiver } from '../webhooks/support/gateway';
import { createPayment, referenceBody } from '../support/payments';
import { createEndpoint } from '../support/webhooks';
import { cookieData, cookieGql, signIn } from './sessionSupport';

/**
 * Issue 17, item 2 (server side): what the dashboard's views read and do, over GraphQL with the
 * session cookie. New here: a payment's webhook deliveries across endpoints (PaymentIntent.
 * webhookDeliveries, each naming its endpoint: WebhookDelivery.endpointId), an endpoint's deliveries
 * by state, and Resend of one of them; the rest are the existing mutations each view calls, driven
 * through the session as the app does.
 */
vi.setConfig({ testTimeout: 90_000 });
const ctx = useGatewayAndReceiver();

async function signedIn(): Promise<{ acct: TestAccount; cookie: string }> {
  const acct = await createAccount(ctx.server.baseUrl);
  const res = await signIn(ctx.server.baseUrl, acct.sk);
  expect(res.status, res.text).toBe(200);
  return { acct, cookie: res.cookie! };
}

const DELIVERIES = `query($id: ID!, $first: Int) { paymentIntent(id: $id) {
  events { id type }
  webhookDeliveries(first: $first) { id endpointId eventId eventType state attempts lastStatus requestBody signatureHeader }
} }`;

it("a payment's deliveries to every endpoint carry the exact bytes and signature sent, and Resend makes a new attempt", async () => {
  const { acct, cookie } = await signedIn();
  const url = ctx.server.baseUrl;
  ctx.receiver.reply = (r) => ({ status: r.path.startsWith('/fail') ? 500 : 200 });
  const ok = await createEndpoint(acct.api, `${ctx.receiver.url}/ok/${acct.id}`);
  const failing = await createEndpoint(acct.api, `${ctx.receiver.url}/fail/${acct.id}`);
  const pi = await createPayment(acct.api, referenceBody());
  await cookieData(url, cookie, 'mutation($r: String!) { simulateReferencePaid(input: {reference: $r}) { status } }', { r: pi.reference.number });

  // Every event of the payment reaches both endpoints, and each delivery records its attempt.
  const read = () => cookieData(url, cookie, DELIVERIES, { id: pi.id });
  const view = await waitFor(read, (d) => {
    const p = d.paymentIntent;
    const types = p.events.map((e: { type: string }) => e.type);
    return types.includes('PAYMENT_SUCCEEDED') && p.webhookDeliveries.length === 2 * p.events.length && p.webhookDeliveries.every((w: any) => w.attempts >= 1);
  });
  const { events, webhookDeliveries } = view.paymentIntent;
  // Event order (oldest first), both endpoints for each event.
  expect([...new Set(webhookDeliveries.map((d: any) => d.eventId))]).toEqual(events.map((e: any) => e.id));
  for (const d of webhookDeliveries) {
    expect([ok.id, failing.id]).toContain(d.endpointId);
    const path = d.endpointId === ok.id ? '/ok/' : '/fail/';
    const sent = ctx.receiver.received.filter((r) => r.path.startsWith(path) && r.path.endsWith(acct.id) && r.headers['service-event-id'] === d.eventId);
    // The receiver may already hold a later scheduled retry (10 s on): attempt n is its n-th request.
    expect(sent.length).toBeGreaterThanOrEqual(d.attempts);
    expect(d.requestBody).toBe(sent[d.attempts - 1]!.rawBody);
    expect(d.signatureHeader).toBe(sent[d.attempts - 1]!.headers['service-signature']);
    expect(d.eventType).toBe(events.find((e: any) => e.id === d.eventId).type);
    expect(d).toMatchObject(d.endpointId === ok.id ? { state: 'DELIVERED', lastStatus: 200 } : { state: 'RETRYING', lastStatus: 500 });
  }
  expect((await cookieData(url, cookie, DELIVERIES, { id: pi.id, first: 1 })).paymentIntent.webhookDeliveries).toHaveLength(1);
  const tooMany = await cookieGql(url, cookie, DELIVERIES, { id: pi.id, first: 101 });
  expect(tooMany.body.errors[0].extensions.code).toBe('invalid_request');

  // Deliveries by state, per endpoint.
  const BY_STATE = 'query($s: WebhookDeliveryState) { webhookEndpoints { id deliveries(state: $s) { id endpointId state } } }';
  const byState = async (s: string | null) =>
    Object.fromEntries((await cookieData(url, cookie, BY_STATE, { s })).webhookEndpoints.map((e: any) => [e.id, e.deliveries]));
  const delivered = await byState('DELIVERED');
  expect(delivered[ok.id].length).toBe(events.length);
  expect(delivered[failing.id]).toEqual([]);
  const retrying = await byState('RETRYING');
  expect(retrying[failing.id].map((d: any) => d.state)).toEqual(events.map(() => 'RETRYING'));
  expect(retrying[failing.id].every((d: any) => d.endpointId === failing.id)).toBe(true);
  expect(retrying[ok.id]).toEqual([]);
  expect((await byState('DEAD_LETTER'))[ok.id]).toEqual([]);
  expect((await byState(null))[failing.id]).toHaveLength(events.length);

  // Resend: one more attempt now; the receiver, now answering 200, gets it and the delivery is DELIVERED.
  ctx.receiver.reply = () => ({ status: 200 });
  const target = webhookDeliveries.find((d: any) => d.endpointId === failing.id);
  const sentBefore = ctx.receiver.received.filter((r) => r.path === `/fail/${acct.id}` && r.headers['service-event-id'] === target.eventId).length;
  const resent = await cookieData(
    url,
    cookie,
    'mutation($e: ID!, $d: ID!) { retryWebhookDelivery(endpointId: $e, deliveryId: $d) { id endpointId state attempts lastStatus requestBody } }',
    { e: target.endpointId, d: target.id },
  );
  expect(resent.retryWebhookDelivery).toMatchObject({ id: target.id, endpointId: failing.id, state: 'DELIVERED', lastStatus: 200, requestBody: target.requestBody });
  expect(resent.retryWebhookDelivery.attempts).toBeGreaterThanOrEqual(target.attempts + 1);
  const sentAfter = ctx.receiver.received.filter((r) => r.path === `/fail/${acct.id}` && r.headers['service-event-id'] === target.eventId);
  expect(sentAfter.length).toBeGreaterThan(sentBefore);
  expect(sentAfter.at(-1)!.rawBody).toBe(target.requestBody);
});

it("each view's actions run through the session", async () => {
  const { acct, cookie } = await signedIn();
  const url = ctx.server.baseUrl;
  const run = (query: string, variables: Record<string, unknown> = {}) => cookieData(url, cookie, query, variables);

  // Payments: a new test payment, the status filter.
  const created = await run(
    'mutation($k: String!) { createPaymentIntent(input: {amount: 5000, currency: "AOA", paymentMethod: MULTICAIXA_REFERENCE}, idempotencyKey: $k) { id status } }',
    { k: `dash-${acct.id}` },
  );
  const pending = await run('{ paymentIntents(status: PENDING) { edges { node { id } } } }');
  expect(pending.paymentIntents.edges.map((e: any) => e.node.id)).toContain(created.createPaymentIntent.id);
  expect((await run('{ paymentIntents(status: SUCCEEDED) { edges { node { id } } } }')).paymentIntents.edges).toEqual([]);
  expect((await run('mutation($id: ID!) { cancelPaymentIntent(id: $id) { status } }', { id: created.createPaymentIntent.id })).cancelPaymentIntent.status).toBe('CANCELLED');

  // Webhooks: create, test ping, rotate, delete.
  const endpoint = (await run('mutation($u: String!) { createWebhookEndpoint(input: {url: $u}) { id secret } }', { u: `${ctx.receiver.url}/views` })).createWebhookEndpoint;
  expect(endpoint.secret).toMatch(/^whsec_/);
  expect((await run('mutation($id: ID!) { sendTestWebhook(id: $id) { state } }', { id: endpoint.id })).sendTestWebhook.state).toBe('QUEUED');
  const rotated = (await run('mutation($id: ID!) { rotateWebhookSecret(id: $id) { secret } }', { id: endpoint.id })).rotateWebhookSecret;
  expect(rotated.secret).not.toBe(endpoint.secret);
  expect((await run('mutation($id: ID!) { deleteWebhookEndpoint(id: $id) { deleted } }', { id: endpoint.id })).deleteWebhookEndpoint.deleted).toBe(true);

  // Payment links: create with its QR, deactivate.
  const link = (await run('mutation { createPaymentLink(input: {amount: 7000}) { id active qrSvg } }')).createPaymentLink;
  expect(link.qrSvg).toMatch(/^<svg/);
  expect((await run('mutation($id: ID!) { deactivatePaymentLink(id: $id) { active } }', { id: link.id })).deactivatePaymentLink.active).toBe(false);

  // API keys: create a restricted one, revoke it.
  const key = (await run('mutation { createApiKey(input: {name: "support", permissions: [PAYMENT_INTENTS_READ]}) { id secret permissions } }')).createApiKey;
  expect(key.permissions).toEqual(['PAYMENT_INTENTS_READ']);
  expect((await run('mutation($id: ID!) { revokeApiKey(id: $id) { revokedAt } }', { id: key.id })).revokeApiKey.revokedAt).toBeTruthy();

  // Clock: advance.
  const before = (await run('{ sandboxClock { offsetSeconds } }')).sandboxClock.offsetSeconds;
  const after = (await run('mutation { advanceSandboxClock(input: {seconds: 3600}) { offsetSeconds } }')).advanceSandboxClock.offsetSeconds;
  expect(after - before).toBe(3600);

  // Events and logs read with the session (the logs of the key the session acts for).
  expect((await run('{ events(first: 5) { edges { node { type } } } }')).events.edges.length).toBeGreaterThan(0);
  // The session's own requests are the dashboard's: listed when asked for.
  expect((await run('{ logs(first: 5, includeDashboard: true) { path source } }')).logs).toContainEqual({ path: '/graphql', source: 'DASHBOARD' });
  expect((await run('{ logs(first: 5) { source } }')).logs.filter((l: { source: string }) => l.source === 'DASHBOARD')).toEqual([]);
});
