import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../support/accounts';
import { createPayment, expressBody } from '../support/payments';
import { spawnGateway, type GatewayProcess } from '../support/processes';
import { startTraceCollector, type OtlpSpan, type TraceCollector } from '../support/traces';
import { waitFor } from '../support/wait';

/**
 * The GraphQL reads REST has no route for (the dashboard's search, one webhook endpoint, the overview)
 * and `events` with its filters run through operations/execute like every other field: a key without
 * the permission they borrow is refused as the REST-mirroring field is, and each one is an `operation …`
 * span, which only execute opens. A real gateway process, its traces sent to this test's receiver.
 */
let collector: TraceCollector;
let gateway: GatewayProcess;
let acct: TestAccount;
let endpointId: string;

beforeAll(async () => {
  collector = await startTraceCollector();
  gateway = await spawnGateway('', { DATA_DIR: '', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '100' });
  acct = await createAccount(gateway.url, 'reads through execute');
  await createPayment(acct.api, expressBody());
  const endpoint = await acct.api.post('/webhook_endpoints', { url: 'http://127.0.0.1:9/hook', events: ['payment.succeeded'] });
  expect(endpoint.status, endpoint.text).toBe(201);
  endpointId = endpoint.body.id as string;
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
  await collector?.close();
});

interface Answer {
  data?: Record<string, unknown> | null;
  errors?: Array<{ message: string; extensions?: { code?: string } }>;
}

/** POST /graphql in a trace of its own; answers the body and that trace's id. */
async function traced(key: string, query: string, variables: Record<string, unknown> = {}): Promise<{ body: Answer; traceId: string }> {
  const traceId = randomBytes(16).toString('hex');
  const res = await fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
    body: JSON.stringify({ query, variables }),
  });
  return { body: (await res.json()) as Answer, traceId };
}

/** The span `name` of the trace, once the exporter has sent it. */
async function spanOf(traceId: string, name: string): Promise<OtlpSpan | undefined> {
  const find = () => collector.spans.find((s) => s.traceId === traceId && s.name === name);
  await waitFor(async () => find(), Boolean, 10_000, 50).catch(() => undefined);
  return find();
}

const refusal = (body: Answer) => body.errors?.map((e) => ({ code: e.extensions?.code, message: e.message }));

async function restrictedKey(permissions: string[]): Promise<string> {
  const created = await acct.api.post('/api_keys', { name: permissions.join(' '), permissions });
  expect(created.status, created.text).toBe(201);
  return created.body.secret as string;
}

const READS = {
  searchPaymentIntents: '{ paymentIntents(first: 5, filter: { search: "" }) { nodes { id } } }',
  getWebhookEndpoint: 'query ($id: ID!) { webhookEndpoint(id: $id) { id } }',
  listEvents: '{ events(first: 5, type: PAYMENT_CREATED) { nodes { id } } }',
  getOverview: '{ overview { range } }',
};

describe('GraphQL reads without a REST route, through execute', () => {
  it('each runs as an operation span of its own', async () => {
    for (const [operationId, query] of Object.entries(READS)) {
      const { body, traceId } = await traced(acct.sk, query, { id: endpointId });
      expect(body.errors, operationId).toBeUndefined();
      const span = await spanOf(traceId, `operation ${operationId}`);
      expect(span, `${operationId}: ${JSON.stringify(collector.spans.filter((s) => s.traceId === traceId).map((s) => s.name))}`).toBeDefined();
      expect(span!.attributes?.find((a) => a.key === 'pgw.operation_id')?.value.stringValue).toBe(operationId);
    }
  });

  it('refuses a key without the borrowed permission as the REST-mirroring field, in a failed operation span', async () => {
    const eventsOnly = await restrictedKey(['events:read']);
    const intentsOnly = await restrictedKey(['payment_intents:read']);
    const list = (await traced(eventsOnly, '{ paymentIntents(first: 5) { nodes { id } } }')).body;
    const endpoints = (await traced(eventsOnly, '{ webhookEndpoints { id } }')).body;
    expect(refusal(list)?.[0]?.code).toBe('permission_denied');
    expect(refusal(endpoints)?.[0]?.code).toBe('permission_denied');

    expect(refusal((await traced(eventsOnly, READS.searchPaymentIntents)).body)).toEqual(refusal(list));
    expect(refusal((await traced(eventsOnly, READS.getWebhookEndpoint, { id: endpointId })).body)).toEqual(refusal(endpoints));
    // The overview needs both lists' permissions: either missing is that list's refusal.
    const overview = await traced(eventsOnly, READS.getOverview);
    expect(refusal(overview.body)).toEqual(refusal(list));
    expect(refusal((await traced(intentsOnly, READS.getOverview)).body)).toEqual(refusal(endpoints));
    // events over GraphQL and GET /events: one rule, one message.
    const rest = await fetch(`${gateway.url}/v1/events?limit=5`, { headers: { authorization: `Bearer ${intentsOnly}` } });
    const restError = ((await rest.json()) as { error: { code: string; message: string } }).error;
    expect(refusal((await traced(intentsOnly, READS.listEvents)).body)).toEqual([{ code: restError.code, message: restError.message }]);

    // Refused inside execute, as a REST call is: the operation's span ends in error.
    expect((await spanOf(overview.traceId, 'operation getOverview'))?.status?.code).toBe(2);
  });
});
