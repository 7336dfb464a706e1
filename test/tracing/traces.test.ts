import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotencyKey, type TestAccount } from '../support/accounts';
import { expressBody } from '../support/payments';
import type { GatewayProcess } from '../support/processes';
import type { Receiver } from '../support/receiver';
import { startTracedGateway, type OtlpSpan, type TraceCollector, type TracedGateway } from '../support/traces';
import { waitFor } from '../support/wait';

/**
 * Traces (contract decisions, "Operating the gateway"): a real gateway with OTEL_EXPORTER_OTLP_ENDPOINT
 * pointed at an OTLP/HTTP receiver of this test (JSON, as @opentelemetry/exporter-trace-otlp-http
 * sends it). One express payment created with the caller's `traceparent`: its trace holds the request
 * (route template and operationId), the operation, its database commands, the two rail timer firings
 * (each linked back to what scheduled it) and the webhook attempt, whose request carries that
 * attempt's own span as `traceparent`. The request's log lines carry the trace id.
 */
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

let traced: TracedGateway;
let collector: TraceCollector;
let gateway: GatewayProcess;
let receiver: Receiver;
let account: TestAccount;

beforeAll(async () => {
  traced = await startTracedGateway('tracing', { LOG_LEVEL: 'info' });
  ({ collector, gateway, receiver, account } = traced);
}, 120_000);

afterAll(async () => {
  await traced?.stop();
});

const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes?.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue === undefined ? undefined : Number(v.intValue));
};

describe('OpenTelemetry traces', () => {
  it('follow an express payment from the request through its rail timers to the webhook attempt', async () => {
    const endpoint = await account.api.post('/webhook_endpoints', { url: `${receiver.url}/hooks`, events: ['payment.succeeded'] });
    expect(endpoint.status, endpoint.text).toBe(201);
    const created = await account.api.post('/payment_intents', expressBody(), {
      idempotencyKey: idempotencyKey(),
      headers: { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` },
    });
    expect(created.status, created.text).toBe(201);
    const paymentId = created.body.id as string;

    const [hook] = await receiver.waitFor((r) => r.rawBody.includes('payment.succeeded') && r.rawBody.includes(paymentId), 1, 30_000);
    const traceparent = String(hook!.headers.traceparent ?? '');
    expect(traceparent).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`));
    const attemptSpanId = traceparent.split('-')[2]!;

    // Every span of the trace, once the exporter's batches have come in.
    const trace = () => collector.spans.filter((s) => s.traceId === TRACE_ID);
    await waitFor(async () => trace().some((s) => s.spanId === attemptSpanId), Boolean, 15_000);
    const byId = new Map(trace().map((s) => [s.spanId, s]));

    const request = trace().find((s) => s.parentSpanId === CALLER_SPAN && s.kind === 2 /* SERVER */);
    expect(request, JSON.stringify(trace().map((s) => s.name))).toBeDefined();
    expect(request!.name).toBe('POST /v1/payment_intents');
    expect(attr(request!, 'http.route')).toBe('/v1/payment_intents');
    expect(attr(request!, 'pgw.operation_id')).toBe('createPaymentIntent');
    expect(attr(request!, 'http.response.status_code')).toBe(201);

    // What ran below the request: the operation, and database commands under it.
    const under = (ancestor: OtlpSpan) => trace().filter((s) => {
      for (let p = s.parentSpanId; p; p = byId.get(p)?.parentSpanId) if (p === ancestor.spanId) return true;
      return false;
    });
    const operation = under(request!).find((s) => s.name === 'operation createPaymentIntent');
    expect(operation).toBeDefined();
    const commands = under(request!).filter((s) => s.name.startsWith('mongodb '));
    expect(commands.map((s) => attr(s, 'db.operation.name'))).toEqual(expect.arrayContaining(['insert']));
    expect(commands.every((s) => s.kind === 3 /* CLIENT */)).toBe(true);

    // The rail: +2 s (PROCESSING) in the request's trace and linked to it, +5 s (SUCCEEDED) to the first firing.
    const firings = trace().filter((s) => s.name.startsWith('timer '));
    expect(firings.length).toBeGreaterThanOrEqual(2);
    const first = firings.find((s) => under(request!).includes(s));
    expect(first, JSON.stringify(firings)).toBeDefined();
    expect(first!.links?.map((l) => l.traceId)).toContain(TRACE_ID);
    const second = firings.find((s) => s.parentSpanId === first!.spanId);
    expect(second, JSON.stringify(firings.map((s) => [s.name, s.spanId, s.parentSpanId]))).toBeDefined();
    expect(second!.links?.map((l) => l.spanId)).toContain(first!.spanId);

    // The webhook attempt: a CLIENT span under the firing that emitted payment.succeeded, named by the request's header.
    const attempt = byId.get(attemptSpanId)!;
    expect(attempt.name).toBe('webhook attempt');
    expect(attempt.kind).toBe(3);
    expect(under(second!)).toContain(attempt);
    expect(attr(attempt, 'http.response.status_code')).toBe(200);

    // The request's log line carries its trace and span.
    const line = gateway
      .output()
      .split('\n')
      .filter((l) => l.includes('"msg":"request"') && l.includes('/v1/payment_intents') && l.includes('"status":201'))
      .map((l) => JSON.parse(l) as { trace_id?: string; span_id?: string })
      .find((l) => l.trace_id === TRACE_ID);
    expect(line?.span_id).toBe(request!.spanId);
  });
});
