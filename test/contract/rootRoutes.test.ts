import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { operations } from '../../generated/operations';
import { createAccount } from '../support/accounts';
import { ApiClient, findRootOperation, type ApiResponse } from '../support/client';
import { spawnEngine, spawnGateway, type EngineProcess, type GatewayProcess } from '../support/processes';
import { startTestServer, type TestServer } from '../support/server';
import { nonLoopbackIPv4, viaAddress } from '../support/peers';
import { createLink, createSession, startGatewayWithJobs } from '../links/support/gateway';

/**
 * The routes at the root (health, readiness, the contract's documents, the docs page, the payment
 * pages) answer as openapi.yaml declares: the test client checks each answer's status, content type and
 * JSON body against the contract, as it does for /v1 (test/support/client.ts). Every declared status
 * of every root operation is exercised here, so a root route cannot drift from its contract unseen.
 */
vi.setConfig({ testTimeout: 120_000 });

const rootOperations = Object.values(operations).filter((op) => op.basePath === '');
/** `<operationId> <status>` of every answer seen, across both describes. */
const exercised = new Set<string>();

async function rootGet(client: ApiClient, path: string, status: number): Promise<ApiResponse> {
  const res = await client.get(path, { root: true, key: null });
  expect(res.status, `GET ${path}: ${res.text.slice(0, 300)}`).toBe(status);
  const op = findRootOperation('GET', path);
  expect(op, `GET ${path} is an operation of openapi.yaml`).toBeDefined();
  exercised.add(`${op!.operationId} ${res.status}`);
  return res;
}

describe('root routes of a running gateway', () => {
  let server: TestServer;
  let anon: ApiClient;
  beforeAll(async () => {
    server = await startGatewayWithJobs();
    anon = new ApiClient(server.baseUrl);
  });
  afterAll(async () => server?.stop());

  it('health and readiness', async () => {
    expect((await rootGet(anon, '/healthz', 200)).body).toEqual({ status: 'ok' });
    expect((await rootGet(anon, '/readyz', 200)).body).toEqual({ status: 'ok', database: 'up' });
  });

  it('metrics: open without METRICS_TOKEN', async () => {
    const res = await rootGet(anon, '/metrics', 200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.text).toContain('# TYPE pgw_http_requests_total counter');
  });

  it('the contract as YAML and JSON, and the docs page', async () => {
    const yaml = await rootGet(anon, '/openapi.yaml', 200);
    expect(yaml.headers.get('content-type')).toMatch(/^application\/yaml/);
    expect(yaml.text).toMatch(/^openapi: 3\.1/);
    const json = await rootGet(anon, '/openapi.json', 200);
    expect(json.body.openapi).toMatch(/^3\.1/);
    expect((await rootGet(anon, '/docs', 200)).text).toContain('swagger-ui');
  });

  it('the payment-link page: active, unknown, deactivated', async () => {
    const { api } = await createAccount(server.baseUrl);
    const link = await createLink(api, { amount: 7500, description: 'Camisola oficial' });
    expect((await rootGet(anon, `/pay/${link.code}`, 200)).text).toContain('7 500 AOA');
    await rootGet(anon, '/pay/ZZZZZZZZ', 404);
    expect((await api.delete(`/payment_links/${link.id}`)).status).toBe(200);
    await rootGet(anon, `/pay/${link.code}`, 410);
  });

  it('the checkout page: open, waiting for its reference payment, unknown, expired', async () => {
    const { api } = await createAccount(server.baseUrl);
    const open = await createSession(api, { amount: 32_000 });
    expect((await rootGet(anon, `/checkout/${open.id}`, 200)).text).toContain('32 000 AOA');
    await rootGet(anon, '/checkout/cs_000000000000000000000000', 404);

    const waiting = await createSession(api, { amount: 5000 });
    const paid = await api.post(`/public/checkout/sessions/${waiting.id}/payments`, { payment_method: 'multicaixa_reference' }, { key: null });
    expect(paid.status, paid.text).toBe(201);
    expect((await api.post('/sandbox/clock/advance', { seconds: 1801 })).status).toBe(200);
    expect((await rootGet(anon, `/checkout/${waiting.id}`, 200)).text).toContain('waiting for its reference payment');
    // `open` had no payment: it expired during that advance.
    await rootGet(anon, `/checkout/${open.id}`, 410);
  });
});

describe('metrics behind METRICS_TOKEN', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ METRICS_TOKEN: 'root-routes-metrics-token-0123' });
  });
  afterAll(async () => server?.stop());

  it('401 without the token, 200 with it', async () => {
    const anon = new ApiClient(server.baseUrl);
    expect((await rootGet(anon, '/metrics', 401)).body.error.code).toBe('authentication_failed');
    const res = await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: 'Bearer root-routes-metrics-token-0123' } });
    expect(res.status).toBe(200);
  });
});

const outside = nonLoopbackIPv4();
/** Declared statuses no test here can reach on this machine, each said out loud. */
const unreachable: string[] = [];
if (!outside) {
  unreachable.push('getMetrics 403');
  console.warn('\n\n*** SKIPPED in test/contract/rootRoutes.test.ts: GET /metrics 403 (this machine has no non-loopback IPv4 address) ***\n\n');
}

describe('past the per-address limit of the root routes', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ PUBLIC_RATE_LIMIT_PER_MINUTE: '2' });
  });
  afterAll(async () => server?.stop());

  it('the payment pages answer 429 with a page, /metrics in the error envelope', async () => {
    const anon = new ApiClient(server.baseUrl);
    for (const path of ['/pay/ZZZZZZZZ', '/checkout/cs_000000000000000000000000', '/metrics']) {
      let res = await anon.get(path, { root: true, key: null });
      for (let i = 0; i < 2 && res.status !== 429; i++) res = await anon.get(path, { root: true, key: null });
      const limited = await rootGet(anon, path, 429);
      expect(limited.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
      if (path === '/metrics') expect(limited.body.error.code).toBe('rate_limit_exceeded');
      else expect(limited.text).toContain('Too many requests');
    }
  });
});

describe('metrics without METRICS_TOKEN from another address', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ HOST: '0.0.0.0' });
  });
  afterAll(async () => server?.stop());

  it.skipIf(!outside)('403 to a non-loopback peer', async () => {
    const fromOutside = new ApiClient(viaAddress(server.baseUrl, outside!));
    expect((await rootGet(fromOutside, '/metrics', 403)).body.error.code).toBe('permission_denied');
  });
});

describe('readiness when the database is gone', () => {
  let engine: EngineProcess | undefined;
  let gateway: GatewayProcess | undefined;
  beforeAll(async () => {
    engine = await spawnEngine();
    gateway = await spawnGateway(engine.uri);
  });
  afterAll(async () => {
    await gateway?.kill();
    await engine?.kill();
  });

  it('answers 503 {"status":"unavailable","database":"down"} while health stays up', async () => {
    const client = new ApiClient(gateway!.url);
    await rootGet(client, '/readyz', 200);
    await engine!.kill();
    // The driver notices the closed connection at once; allow it a moment all the same.
    const deadline = Date.now() + 20_000;
    let res = await client.get('/readyz', { root: true, key: null });
    while (res.status !== 503 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      res = await client.get('/readyz', { root: true, key: null });
    }
    exercised.add(`readyz ${res.status}`);
    expect(res.status, res.text).toBe(503);
    expect(res.body).toEqual({ status: 'unavailable', database: 'down' });
    expect((await rootGet(client, '/healthz', 200)).body).toEqual({ status: 'ok' });
    // The pages cannot read their link or session: a page, not JSON, says so.
    expect((await rootGet(client, '/pay/ZZZZZZZZ', 500)).text).toContain('Something went wrong');
    expect((await rootGet(client, '/checkout/cs_000000000000000000000000', 500)).text).toContain('Something went wrong');
  });
});

describe('coverage', () => {
  it('every declared status of every root operation was exercised above', () => {
    const declared = rootOperations
      .flatMap((op) => Object.keys(op.responseContentTypes).map((status) => `${op.operationId} ${status}`))
      .filter((s) => !unreachable.includes(s));
    expect(declared.length).toBeGreaterThan(10);
    expect([...exercised].sort()).toEqual(declared.sort());
  });
});
