import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { continuesCallerTrace } from '../../src/rest/requestSpan';
import { startTracedGateway, type OtlpSpan, type TracedGateway } from '../support/traces';
import { waitFor } from '../support/wait';

/**
 * Whose trace a request joins (contract decisions, "Hostile clients at the edge"): a keyed request
 * continues its caller's `traceparent`; a keyless one (account creation, public pages' JSON routes,
 * public streams) starts a new trace whose request span links to the caller's context. Otherwise a
 * payer on a public page would choose the trace id of the merchant's webhooks. A real gateway, its
 * spans received over OTLP/HTTP by this test.
 */
const CALLER_SPAN = '00f067aa0ba902b7';
const traceparent = (traceId: string) => `00-${traceId}-${CALLER_SPAN}-01`;
/** A distinct caller trace id per case. */
const traceIdOf = (n: number) => `${'ab'.repeat(15)}${String(n).padStart(2, '0')}`;

let t: TracedGateway;
beforeAll(async () => {
  t = await startTracedGateway('keyless traces');
}, 120_000);
afterAll(async () => t?.stop());

/** The request (SERVER) span named `name` that either continues or links `callerTraceId`. */
async function requestSpanOf(name: string, callerTraceId: string): Promise<OtlpSpan> {
  const find = () => t.collector.spans.filter((s) => s.kind === 2 && s.name === name && (s.traceId === callerTraceId || s.links?.some((l) => l.traceId === callerTraceId)));
  const spans = await waitFor(async () => find(), (found) => found.length > 0, 15_000).catch(() => find());
  const servers = t.collector.spans.filter((s) => s.kind === 2).map((s) => ({ name: s.name, traceId: s.traceId, parent: s.parentSpanId, links: s.links }));
  expect(spans, `request spans received: ${JSON.stringify(servers)}`).toHaveLength(1);
  return spans[0]!;
}

function expectNewTraceLinkedTo(span: OtlpSpan, callerTraceId: string): void {
  expect(span.traceId).not.toBe(callerTraceId);
  expect(span.parentSpanId ?? '').toBe('');
  expect(span.links).toEqual([expect.objectContaining({ traceId: callerTraceId, spanId: CALLER_SPAN })]);
}

describe('continuesCallerTrace', () => {
  it('only for an API key on a route that takes one', () => {
    const key = { authorization: 'Bearer sk_test_anything' };
    expect(continuesCallerTrace('GET', '/v1/payment_intents', key)).toBe(true);
    expect(continuesCallerTrace('POST', '/graphql', { authorization: 'Bearer pk_test_anything' })).toBe(true);
    expect(continuesCallerTrace('GET', '/v1/payment_intents', {})).toBe(false);
    expect(continuesCallerTrace('POST', '/graphql', {})).toBe(false);
    expect(continuesCallerTrace('POST', '/graphql', { authorization: 'Bearer ct_test_anything' })).toBe(false);
    // A public route stays keyless whatever Authorization it is sent with.
    expect(continuesCallerTrace('POST', '/v1/sandbox/accounts', key)).toBe(false);
    expect(continuesCallerTrace('GET', '/v1/public/payment_links/ABCD1234', key)).toBe(false);
    expect(continuesCallerTrace('GET', '/v1/public/payments/pay_x/events', key)).toBe(false);
    expect(continuesCallerTrace('GET', '/pay/ABCD1234', key)).toBe(false);
    expect(continuesCallerTrace('GET', '/v1/no_such_route', key)).toBe(false);
  });
});

describe('request spans and the caller trace', () => {
  it('a keyed route continues the caller trace', async () => {
    const caller = traceIdOf(1);
    expect((await t.account.api.get('/payment_intents?limit=1', { headers: { traceparent: traceparent(caller) } })).status).toBe(200);
    const span = await requestSpanOf('GET /v1/payment_intents', caller);
    expect(span.traceId).toBe(caller);
    expect(span.parentSpanId).toBe(CALLER_SPAN);
    expect(span.links ?? []).toEqual([]);
  });

  it('account creation and a public page JSON route start a new trace linked to the caller, key or not', async () => {
    const created = await fetch(`${t.gateway.url}/v1/sandbox/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: traceparent(traceIdOf(2)) },
      body: JSON.stringify({ name: 'traced' }),
    });
    expect(created.status).toBe(201);
    expectNewTraceLinkedTo(await requestSpanOf('POST /v1/sandbox/accounts', traceIdOf(2)), traceIdOf(2));

    const link = await t.account.api.post('/payment_links', { amount: 4_000 });
    expect(link.status, link.text).toBe(201);
    // The key sent along changes nothing on a public route.
    const page = await fetch(`${t.gateway.url}/v1/public/payment_links/${link.body.code}`, {
      headers: { traceparent: traceparent(traceIdOf(3)), authorization: `Bearer ${t.account.sk}` },
    });
    expect(page.status).toBe(200);
    expectNewTraceLinkedTo(await requestSpanOf('GET /v1/public/payment_links/:code', traceIdOf(3)), traceIdOf(3));
  });

  it('a payer on a public checkout does not choose the trace id of the merchant webhooks', async () => {
    const endpoint = await t.account.api.post('/webhook_endpoints', { url: `${t.receiver.url}/hooks`, events: ['payment.created'] });
    expect(endpoint.status, endpoint.text).toBe(201);
    const session = await t.account.api.post('/checkout/sessions', { amount: 5_000 });
    expect(session.status, session.text).toBe(201);
    const caller = traceIdOf(4);
    const paid = await fetch(`${t.gateway.url}/v1/public/checkout/sessions/${session.body.id}/payments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: traceparent(caller) },
      body: JSON.stringify({ payment_method: 'multicaixa_reference' }),
    });
    expect(paid.status, await paid.clone().text()).toBe(201);
    const paymentId = ((await paid.json()) as { id: string }).id;
    const span = await requestSpanOf('POST /v1/public/checkout/sessions/:id/payments', caller);
    expectNewTraceLinkedTo(span, caller);

    const [hook] = await t.receiver.waitFor((r) => r.rawBody.includes('payment.created') && r.rawBody.includes(paymentId), 1, 30_000);
    const hookTrace = String(hook!.headers.traceparent ?? '').split('-')[1];
    expect(hookTrace).toBe(span.traceId);
    expect(hookTrace).not.toBe(caller);
  });
});
