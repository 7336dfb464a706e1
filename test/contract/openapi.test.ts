// Contract tests for openapi.yaml and what codegen.ts generates from it.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { errorCodeFor, operations, type OperationId } from '../../generated/operations';
import { getValidator, validators } from '../../generated/validators/index';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);

type Obj = Record<string, unknown>;
const doc = parse(readFileSync(path.join(ROOT, 'openapi.yaml'), 'utf8')) as {
  servers: { url: string }[];
  paths: Record<string, Obj>;
  webhooks: Record<string, Obj>;
  components: { schemas: Record<string, Obj>; examples: Record<string, Obj>; responses: Record<string, Obj> };
};
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

interface Op {
  method: string;
  path: string;
  op: Obj;
}
const allOps: Op[] = Object.entries(doc.paths).flatMap(([p, item]) =>
  METHODS.filter((m) => item[m]).map((m) => ({ method: m.toUpperCase(), path: p, op: item[m] as Obj })),
);
const opById = new Map(allOps.map((o) => [o.op.operationId as string, o]));

function deref<T = Obj>(value: unknown): T {
  let cur = value as Obj;
  while (typeof cur.$ref === 'string') {
    cur = (cur.$ref as string)
      .slice(2)
      .split('/')
      .reduce<unknown>((acc, k) => (acc as Obj)[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc) as Obj;
  }
  return cur as T;
}

/** Example values of a media type object (`example` or `examples.*.value`, refs resolved). */
function examplesOf(media: Obj | undefined): unknown[] {
  if (!media) return [];
  const out: unknown[] = [];
  if ('example' in media) out.push(media.example);
  for (const ex of Object.values((media.examples as Obj | undefined) ?? {})) out.push(deref<Obj>(ex).value);
  return out;
}

// ----- the specification's endpoint tables (shared/spec/payment-gateway-v1.md), with declared statuses ---------
const SPEC_ENDPOINTS: [string, string, string, number[]][] = [
  ['POST', '/sandbox/accounts', 'createSandboxAccount', [201, 400, 429]],
  ['POST', '/sandbox/simulate/reference_paid', 'simulateReferencePaid', [200, 401, 404, 409]],
  ['GET', '/account', 'getAccount', [200]],
  ['POST', '/payment_intents', 'createPaymentIntent', [201, 400, 401, 403, 409, 429, 503]],
  ['GET', '/payment_intents', 'listPaymentIntents', [200, 401]],
  ['GET', '/payment_intents/{id}', 'getPaymentIntent', [200, 401, 404]],
  ['POST', '/payment_intents/{id}/cancel', 'cancelPaymentIntent', [200, 404, 409]],
  ['GET', '/payment_intents/{id}/events', 'streamPaymentIntentEvents', [200, 401, 404]],
  ['GET', '/public/payments/{id}/events', 'streamPublicPaymentEvents', [200, 404]],
  ['POST', '/refunds', 'createRefund', [201, 400, 403, 404, 409]],
  ['GET', '/refunds/{id}', 'getRefund', [200, 404]],
  ['GET', '/payment_methods', 'listPaymentMethods', [200, 401]],
  ['POST', '/payment_links', 'createPaymentLink', [201, 400, 403]],
  ['GET', '/payment_links', 'listPaymentLinks', [200, 401]],
  ['GET', '/payment_links/{id}', 'getPaymentLink', [200, 404]],
  ['DELETE', '/payment_links/{id}', 'deactivatePaymentLink', [200, 404]],
  ['GET', '/payment_links/{id}/qr', 'getPaymentLinkQr', [200, 404]],
  ['POST', '/qr_codes', 'createQrCode', [201, 400, 404]],
  ['POST', '/checkout/sessions', 'createCheckoutSession', [201, 400, 403]],
  ['GET', '/checkout/sessions/{id}', 'getCheckoutSession', [200, 404]],
  ['POST', '/webhook_endpoints', 'createWebhookEndpoint', [201, 400]],
  ['GET', '/webhook_endpoints', 'listWebhookEndpoints', [200, 401]],
  ['DELETE', '/webhook_endpoints/{id}', 'deleteWebhookEndpoint', [200, 404]],
  ['POST', '/webhook_endpoints/{id}/test', 'sendTestWebhook', [202, 404]],
  ['GET', '/webhook_endpoints/{id}/deliveries', 'listWebhookDeliveries', [200, 404]],
  ['GET', '/events', 'listEvents', [200, 401]],
  ['GET', '/logs', 'listLogs', [200, 401]],
];

// ----- additions fixed by shared/design/contract-decisions.md ------------------------------------------------------
const DECISION_ENDPOINTS: [string, string, string][] = [
  ['GET', '/api_keys', 'listApiKeys'],
  ['POST', '/api_keys', 'createApiKey'],
  ['DELETE', '/api_keys/{id}', 'revokeApiKey'],
  ['POST', '/webhook_endpoints/{id}/deliveries/{delivery_id}/retry', 'retryWebhookDelivery'],
  ['POST', '/webhook_endpoints/{id}/rotate_secret', 'rotateWebhookSecret'],
  ['PUT', '/webhook_endpoints/{id}/chaos', 'setWebhookChaos'],
  ['GET', '/webhook_endpoints/{id}/chaos', 'getWebhookChaos'],
  ['DELETE', '/webhook_endpoints/{id}/chaos', 'clearWebhookChaos'],
  ['GET', '/webhook_endpoints/{id}/pending', 'listPendingWebhookEvents'],
  ['POST', '/webhook_endpoints/{id}/pending/ack', 'ackPendingWebhookEvents'],
  ['POST', '/webhook_endpoints/{id}/recover', 'recoverWebhookDeliveries'],
  ['GET', '/sandbox/clock', 'getSandboxClock'],
  ['POST', '/sandbox/clock/advance', 'advanceSandboxClock'],
  ['POST', '/sandbox/reset', 'resetSandbox'],
  ['GET', '/public/payment_links/{code}', 'getPublicPaymentLink'],
  ['POST', '/public/payment_links/{code}/payments', 'createPublicPaymentLinkPayment'],
  ['GET', '/public/checkout/sessions/{id}', 'getPublicCheckoutSession'],
  ['POST', '/public/checkout/sessions/{id}/payments', 'createPublicCheckoutSessionPayment'],
  // Client tokens (live status in merchants' own frontends).
  ['POST', '/client_tokens', 'createClientToken'],
  ['DELETE', '/client_tokens/{id}', 'deleteClientToken'],
  ['GET', '/public/payments/{id}', 'getPublicPayment'],
  // Trusted GraphQL documents and the GraphQL settings.
  ['GET', '/graphql/documents', 'listGraphqlDocuments'],
  ['POST', '/graphql/documents', 'registerGraphqlDocuments'],
  ['DELETE', '/graphql/documents/{id}', 'deleteGraphqlDocument'],
  ['GET', '/graphql/settings', 'getGraphqlSettings'],
  ['PUT', '/graphql/settings', 'updateGraphqlSettings'],
];
/** Served at the root (PUBLIC_BASE_URL), not under /v1. */
const ROOT_ENDPOINTS: [string, string, string][] = [
  ['GET', '/healthz', 'healthz'],
  ['GET', '/readyz', 'readyz'],
  ['GET', '/metrics', 'getMetrics'],
  ['GET', '/openapi.yaml', 'getOpenApiDocument'],
  ['GET', '/openapi.json', 'getOpenApiDocumentJson'],
  ['GET', '/docs', 'getDocsPage'],
  ['GET', '/pay/{code}', 'getPaymentLinkPage'],
  ['GET', '/checkout/{id}', 'getCheckoutPage'],
];
const ALL_ENDPOINTS = [...SPEC_ENDPOINTS.map(([m, p, id]) => [m, p, id] as const), ...DECISION_ENDPOINTS, ...ROOT_ENDPOINTS];
const PUBLIC_OPERATIONS = [
  'createSandboxAccount',
  'streamPublicPaymentEvents',
  'getPublicPaymentLink',
  'createPublicPaymentLinkPayment',
  'getPublicCheckoutSession',
  'createPublicCheckoutSessionPayment',
  // No API key: its client_token authenticates it.
  'getPublicPayment',
  ...ROOT_ENDPOINTS.map(([, , id]) => id),
].sort();

const lintEnv = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };

describe('openapi.yaml lints clean', () => {
  it('`npx redocly lint openapi.yaml` exits 0', async () => {
    // execFile rejects on a non-zero exit code.
    const { stdout, stderr } = await run('npx', ['redocly', 'lint', 'openapi.yaml'], { cwd: ROOT, env: lintEnv, timeout: 120_000 });
    expect(`${stdout}\n${stderr}`).toMatch(/valid/i);
  });

  it('has neither errors nor warnings under redocly.yaml', async () => {
    const { stdout, stderr } = await run(
      'npx',
      ['redocly', 'lint', 'openapi.yaml', '--config', 'redocly.yaml', '--format=summary'],
      { cwd: ROOT, env: lintEnv, timeout: 120_000 },
    );
    const out = `${stdout}\n${stderr}`;
    expect(out).not.toMatch(/^\s*(error|warning) /m);
    expect(out).not.toMatch(/You have \d+ warning/);
  });
});

describe('every endpoint is described', () => {
  it.each(ALL_ENDPOINTS)('%s %s (%s)', (method, p, operationId) => {
    const item = doc.paths[p];
    expect(item, `path ${p}`).toBeDefined();
    const op = item?.[method.toLowerCase()] as Obj | undefined;
    expect(op, `${method} ${p}`).toBeDefined();
    expect(op?.operationId).toBe(operationId);
  });

  it.each(SPEC_ENDPOINTS)('%s %s declares the statuses of the specification', (method, p, _id, statuses) => {
    const op = doc.paths[p]?.[method.toLowerCase()] as Obj;
    const declared = Object.keys(op.responses as Obj);
    for (const status of statuses) expect(declared).toContain(String(status));
  });

  it('has exactly the expected operationIds, each once', () => {
    const ids = allOps.map((o) => o.op.operationId as string);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ALL_ENDPOINTS.map(([, , id]) => id).sort());
  });

  it('puts the API under /v1 and health, documents and pages at the root', () => {
    // Relative: the docs page (and any client that fetched the document) resolves them against the gateway it came from.
    expect(doc.servers.map((s) => s.url)).toEqual(['/v1']);
    for (const [, p] of ROOT_ENDPOINTS) {
      expect((doc.paths[p]?.servers as { url: string }[])[0]?.url).toBe('/');
    }
    for (const [, p] of [...SPEC_ENDPOINTS, ...DECISION_ENDPOINTS]) expect(doc.paths[p]?.servers).toBeUndefined();
  });

  it('marks exactly the public routes with `security: []`', () => {
    const publicOps = allOps.filter((o) => Array.isArray(o.op.security) && (o.op.security as unknown[]).length === 0);
    expect(publicOps.map((o) => o.op.operationId).sort()).toEqual(PUBLIC_OPERATIONS);
    expect(Object.keys(operations).filter((id) => operations[id as OperationId].public).sort()).toEqual(PUBLIC_OPERATIONS);
  });

  it('declares a 4XX response on every /v1 operation and every HTML page (operation-4xx-response is off for the root operational routes)', () => {
    const exempt = new Set(['healthz', 'readyz', 'getOpenApiDocument', 'getOpenApiDocumentJson', 'getDocsPage']);
    for (const { op } of allOps) {
      if (exempt.has(op.operationId as string)) continue;
      expect(Object.keys(op.responses as Obj).some((s) => s.startsWith('4')), op.operationId as string).toBe(true);
    }
  });

  it('requires Idempotency-Key (8 to 128 characters) on POST /payment_intents and POST /refunds only', () => {
    const withKey = allOps.filter((o) =>
      ((o.op.parameters as unknown[] | undefined) ?? []).some((p) => deref<Obj>(p).name === 'Idempotency-Key'),
    );
    expect(withKey.map((o) => o.op.operationId).sort()).toEqual(['createPaymentIntent', 'createRefund']);
    const param = deref<Obj>({ $ref: '#/components/parameters/IdempotencyKey' });
    expect(param).toMatchObject({ in: 'header', required: true, schema: { minLength: 8, maxLength: 128 } });
  });
});

describe('examples', () => {
  it.each(allOps.map((o) => [o.op.operationId as string, o] as const))('%s has request and response examples', (_id, { op }) => {
    const body = op.requestBody ? deref<Obj>(op.requestBody) : undefined;
    if (body) {
      const media = Object.values(body.content as Obj)[0] as Obj;
      expect(examplesOf(media).length, 'request example').toBeGreaterThan(0);
    }
    const success = Object.entries(op.responses as Obj).find(([s]) => s.startsWith('2'));
    expect(success, 'a 2xx response').toBeDefined();
    const content = deref<Obj>(success?.[1]).content as Obj | undefined;
    const media = Object.values(content ?? {})[0] as Obj | undefined;
    expect(examplesOf(media).length, 'response example').toBeGreaterThan(0);
  });

  it('every JSON example passes the generated validator of its operation and status', () => {
    let checked = 0;
    for (const { op } of allOps) {
      const id = op.operationId as OperationId;
      const spec = operations[id];
      const body = op.requestBody ? deref<Obj>(op.requestBody) : undefined;
      const bodyMedia = (body?.content as Obj | undefined)?.['application/json'] as Obj | undefined;
      for (const ex of examplesOf(bodyMedia)) {
        const v = getValidator(spec.validators.body ?? '');
        expect(v?.(ex), `${id} request example: ${JSON.stringify(v?.errors)}`).toBe(true);
        checked++;
      }
      for (const [status, raw] of Object.entries(op.responses as Obj)) {
        const media = (deref<Obj>(raw).content as Obj | undefined)?.['application/json'] as Obj | undefined;
        for (const ex of examplesOf(media)) {
          const v = getValidator(spec.validators.responses[status] ?? '');
          expect(v?.(ex), `${id} ${status} example: ${JSON.stringify(v?.errors)}`).toBe(true);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('each reusable error response has an example with a code of its status', () => {
    const expected: Record<string, string> = {
      BadRequest: 'invalid_request',
      Unauthorized: 'authentication_failed',
      Forbidden: 'permission_denied',
      NotFound: 'resource_not_found',
      Conflict: 'payment_already_processed',
      Gone: 'payment_link_inactive',
      PayloadTooLarge: 'payload_too_large',
      TooManyRequests: 'rate_limit_exceeded',
      InternalError: 'internal_error',
      Maintenance: 'maintenance',
    };
    for (const [name, code] of Object.entries(expected)) {
      const media = (doc.components.responses[name]?.content as Obj)['application/json'] as Obj;
      expect((media.schema as Obj).$ref).toBe('#/components/schemas/Error');
      expect((media.example as { error: { code: string } }).error.code).toBe(code);
    }
    for (const name of ['TooManyRequests', 'Maintenance']) {
      expect(Object.keys(doc.components.responses[name]?.headers as Obj)).toContain('Retry-After');
    }
  });
});

describe('schemas', () => {
  // Enums (ErrorCode, statuses, event types, methods) against the domain's constants: domainConstants.test.ts.

  it('request bodies reject unknown fields at every level', () => {
    const visit = (schema: unknown, where: string, seen: Set<unknown>): void => {
      const s = deref<Obj>(schema);
      if (seen.has(s)) return;
      seen.add(s);
      if (s.type === 'object' && s !== doc.components.schemas.Metadata) {
        expect(s.additionalProperties, where).toBe(false);
      }
      for (const [k, sub] of Object.entries((s.properties as Obj | undefined) ?? {})) visit(sub, `${where}.${k}`, seen);
      if (s.items) visit(s.items, `${where}[]`, seen);
    };
    for (const { op } of allOps) {
      if (!op.requestBody) continue;
      const media = (deref<Obj>(op.requestBody).content as Obj)['application/json'] as Obj;
      visit(media.schema, op.operationId as string, new Set());
    }
  });

  it('annotates customer.mobile with x-error-code invalid_phone_number and the intent amount with amount_out_of_range', () => {
    const mobile = (doc.components.schemas.Customer?.properties as Obj).mobile as Obj;
    expect(mobile).toMatchObject({ pattern: '^9[0-9]{8}$', 'x-error-code': 'invalid_phone_number' });
    const amount = (doc.components.schemas.CreatePaymentIntentRequest?.properties as Obj).amount as Obj;
    expect(amount).toMatchObject({ minimum: 100, maximum: 50000000, 'x-error-code': 'amount_out_of_range' });
    expect(operations.createPaymentIntent.errorCodes).toEqual({
      '/amount': 'amount_out_of_range',
      '/customer/mobile': 'invalid_phone_number',
    });
    expect(operations.createPublicPaymentLinkPayment.errorCodes).toEqual({ '/customer/mobile': 'invalid_phone_number' });
  });

  it('PublicPaymentIntent carries the public view only', () => {
    expect(Object.keys(doc.components.schemas.PublicPaymentIntent?.properties as Obj).sort()).toEqual(
      [
        'id',
        'object',
        'amount',
        'currency',
        'payment_method',
        'status',
        'failure_code',
        'reference',
        'amount_refunded',
        'livemode',
        'created_at',
        'updated_at',
      ].sort(),
    );
  });

  it('describes the outbound webhook with its signature and event id headers, and the Standard Webhooks ones', () => {
    const post = doc.webhooks.paymentEvent?.post as Obj;
    const names = (post.parameters as Obj[]).map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining(['Service-Signature', 'Service-Event-Id', 'webhook-id', 'webhook-timestamp', 'webhook-signature']));
    const headers = validators.paymentEvent_headers;
    const id = 'evt_KbDRoe7DDnnozY3aOwehgCVD';
    const sig = 't=1795255205,v1=' + 'a'.repeat(64);
    const standard = (signature: string) => ({ 'webhook-id': id, 'webhook-timestamp': '1795255205', 'webhook-signature': signature });
    const v1 = `v1,${'A'.repeat(43)}=`;
    expect(headers({ 'service-signature': sig, 'service-event-id': id, ...standard(v1) })).toBe(true);
    expect(headers({ 'service-signature': `${sig},v1=${'b'.repeat(64)}`, 'service-event-id': id, ...standard(`${v1} ${v1}`) })).toBe(true);
    expect(headers({ 'service-signature': 'v1=abc', 'service-event-id': id, ...standard(v1) })).toBe(false);
    expect(headers({ 'service-signature': sig, 'service-event-id': id, ...standard('v1=abc') })).toBe(false);
    expect(headers({ 'service-signature': sig, 'service-event-id': id })).toBe(false);
  });
});

describe('generated validators', () => {
  const intent = { amount: 15000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000000' } };

  it('reject an unknown body field with an additionalProperties error naming it', () => {
    const v = validators.createPaymentIntent_body;
    expect(v(intent)).toBe(true);
    expect(v({ ...intent, surprise: 1 })).toBe(false);
    expect(v.errors?.[0]).toMatchObject({ keyword: 'additionalProperties', params: { additionalProperty: 'surprise' } });
    expect(v({ ...intent, customer: { mobile: '923000000', name: 'x' } })).toBe(false);
    expect(v.errors?.[0]).toMatchObject({ instancePath: '/customer', params: { additionalProperty: 'name' } });
  });

  it('coerce query parameters and fill the default limit (25 for payment intents, 20 for events and logs)', () => {
    const v = validators.listPaymentIntents_query;
    const empty: Record<string, unknown> = {};
    expect(v(empty)).toBe(true);
    expect(empty.limit).toBe(25);
    const five: Record<string, unknown> = { limit: '5' };
    expect(v(five)).toBe(true);
    expect(five.limit).toBe(5);
    expect(v({ limit: '0' })).toBe(false);
    expect(v({ limit: '501' })).toBe(false);
    expect(v({ limit: 'ten' })).toBe(false);
    expect(v({ status: 'SUCCEEDED', starting_after: 'pay_mc2h4S6jJP9TqZnldbfWOlNL' })).toBe(true);
    expect(v({ status: 'PAID' })).toBe(false);
    for (const name of ['listEvents_query', 'listLogs_query'] as const) {
      const q: Record<string, unknown> = {};
      expect(validators[name](q)).toBe(true);
      expect(q.limit).toBe(20);
      expect(validators[name]({ limit: '101' })).toBe(false);
    }
  });

  it('map a malformed mobile to invalid_phone_number and an out-of-range amount to amount_out_of_range', () => {
    const v = validators.createPaymentIntent_body;
    expect(v({ ...intent, customer: { mobile: '12345' } })).toBe(false);
    expect(errorCodeFor('createPaymentIntent', v.errors![0]!)).toBe('invalid_phone_number');
    expect(v({ ...intent, customer: {} })).toBe(false);
    expect(errorCodeFor('createPaymentIntent', v.errors![0]!)).toBe('invalid_phone_number');
    expect(v({ ...intent, amount: 99 })).toBe(false);
    expect(errorCodeFor('createPaymentIntent', v.errors![0]!)).toBe('amount_out_of_range');
    expect(v({ ...intent, amount: 10.5 })).toBe(false);
    expect(errorCodeFor('createPaymentIntent', v.errors![0]!)).toBe('invalid_request');
    const { amount: _omitted, ...noAmount } = intent;
    expect(v(noAmount)).toBe(false);
    expect(errorCodeFor('createPaymentIntent', v.errors![0]!)).toBe('invalid_request');
  });

  it('accept coming-soon method codes (answered method_disabled by the service) but not unknown ones', () => {
    const v = validators.createPaymentIntent_body;
    expect(v({ amount: 1000, currency: 'AOA', payment_method: 'card' })).toBe(true);
    expect(v({ amount: 1000, currency: 'AOA', payment_method: 'bitcoin' })).toBe(false);
  });

  it('check the Idempotency-Key header by its lower-cased name', () => {
    const v = validators.createPaymentIntent_headers;
    expect(v({ 'idempotency-key': 'order-1042-attempt-1', host: 'localhost' })).toBe(true);
    expect(v({ 'idempotency-key': 'short' })).toBe(false);
    expect(v({ 'idempotency-key': 'k'.repeat(129) })).toBe(false);
    expect(v({})).toBe(false);
  });

  it('reject a response carrying an unexpected field (a leaked secret)', () => {
    const endpoint = {
      id: 'whe_C0sDU1UipiCT1NuZQYNYl5sB',
      object: 'webhook_endpoint',
      url: 'https://shop.example/hooks',
      events: ['*'],
      name: null,
      description: null,
      created_at: '2026-11-21T10:00:00.000Z',
      chaos: null,
      mode: 'push',
    };
    expect(validators.listWebhookEndpoints_200({ object: 'list', data: [endpoint], has_more: false })).toBe(true);
    expect(validators.listWebhookEndpoints_200({ object: 'list', data: [{ ...endpoint, secret: 'whsec_abc' }], has_more: false })).toBe(false);
    expect(validators.createWebhookEndpoint_201({ ...endpoint, secret: 'whsec_abc' })).toBe(true);
  });

  it('are all reachable by the names operations.ts references', () => {
    for (const [id, spec] of Object.entries(operations)) {
      const { responses, ...request } = spec.validators;
      for (const name of [...Object.values(request), ...Object.values(responses)]) {
        expect(typeof getValidator(name as string), `${id}: ${String(name)}`).toBe('function');
      }
      const o = opById.get(id);
      expect(o, id).toBeDefined();
      expect(spec.method).toBe(o?.method);
      expect(spec.path).toBe(o?.path);
      expect(spec.expressPath).toBe(spec.path.replace(/\{([^}]+)\}/g, ':$1'));
    }
    expect(operations.getPaymentIntent.validators.params).toBe('getPaymentIntent_params');
    expect(operations.healthz.basePath).toBe('');
    expect(operations.createPaymentIntent.basePath).toBe('/v1');
    expect(getValidator('no_such_validator')).toBeUndefined();
  });
});
