import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAccount } from '../support/accounts';
import { createPayment, expressBody, referenceBody } from '../support/payments';
import { startTestServer, type TestServer } from '../support/server';
import { spawnEngine, spawnGateway, type EngineProcess, type GatewayProcess } from '../support/processes';
import { waitFor } from '../support/wait';
import { parseMetrics, valueOf } from './support';

/**
 * GET /metrics over real HTTP: who may read it (METRICS_TOKEN, METRICS_ENABLED), what it counts for a
 * few requests, that no label carries an account id or a raw path, and that beside a background
 * thread what that thread's timers observed reaches the HTTP thread's answer.
 */
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const TOKEN = 'metrics-endpoint-test-token-4d1c9a';
const PROMTOOL = '/usr/bin/promtool';
const hasPromtool = fs.existsSync(PROMTOOL);
if (!hasPromtool) console.warn('SKIPPED in test/metrics/metricsEndpoint.test.ts: promtool check of the merged answer (Debian package prometheus; .ci/run installs it)');

describe('GET /metrics behind METRICS_TOKEN', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ METRICS_TOKEN: TOKEN });
  });
  afterAll(async () => server?.stop());

  it('401 in the error envelope without the token or with another one, 200 with it', async () => {
    for (const headers of [{}, { authorization: 'Bearer not-the-metrics-token-at-all' }, { authorization: `Bearer ${TOKEN}x` }, { authorization: TOKEN }] as Array<Record<string, string>>) {
      const res = await fetch(`${server.baseUrl}/metrics`, { headers });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      const body = (await res.json()) as { error: { code: string; message: string; request_id: string } };
      expect(body.error.code).toBe('authentication_failed');
      expect(body.error.request_id).toBe(res.headers.get('request-id'));
      expect(body.error.message).not.toContain(TOKEN);
    }
    const ok = await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(ok.headers.get('cache-control')).toBe('no-store');
  });

  it('counts requests by operationId and status, and no label holds an account id, a payment id or a path', async () => {
    const acct = await createAccount(server.baseUrl);
    const created = await createPayment(acct.api, referenceBody());
    for (let i = 0; i < 3; i++) expect((await acct.api.get(`/payment_intents/${created.id}`)).status).toBe(200);
    expect((await acct.api.get('/payment_intents/pay_000000000000000000000000')).status).toBe(404);
    expect((await acct.api.get(`/no_such_route/${acct.id}`)).status).toBe(404);
    expect((await fetch(`${server.baseUrl}/pay/${acct.id}`)).status).toBe(404);

    const text = await (await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    const samples = parseMetrics(text);
    expect(valueOf(samples, 'pgw_http_requests_total', { operation: 'getPaymentIntent', status: '200' })).toBe(3);
    expect(valueOf(samples, 'pgw_http_requests_total', { operation: 'getPaymentIntent', status: '404' })).toBe(1);
    expect(valueOf(samples, 'pgw_http_requests_total', { operation: 'createPaymentIntent', status: '201' })).toBe(1);
    expect(valueOf(samples, 'pgw_http_requests_total', { operation: 'unmatched', status: '404' })).toBe(1);
    expect(valueOf(samples, 'pgw_http_request_duration_seconds_count', { operation: 'getPaymentIntent' })).toBe(4);
    expect(valueOf(samples, 'pgw_payments_created_total', { method: 'multicaixa_reference' })).toBe(1);
    expect(valueOf(samples, 'pgw_database_up')).toBe(1);
    expect(valueOf(samples, 'pgw_database_command_duration_seconds_count', { command: 'insert' })).toBeGreaterThan(0);
    expect(valueOf(samples, 'pgw_database_command_duration_seconds_count', { command: 'find' })).toBeGreaterThan(0);
    // The driver's handshake and heartbeats are its own, not the gateway's commands.
    const commands = samples.filter((s) => s.name === 'pgw_database_command_duration_seconds_count').map((s) => s.labels.command);
    expect(commands).not.toContain('hello');
    expect(commands).not.toContain('isMaster');
    expect(commands).not.toContain('ismaster');

    const labelValues = samples.flatMap((s) => Object.values(s.labels));
    expect(labelValues.length).toBeGreaterThan(100);
    for (const value of labelValues) {
      expect(value).not.toContain(acct.id);
      expect(value).not.toContain(created.id);
      expect(value).not.toMatch(/^(acct|pay|sk|pk|req|whe|whd)_/);
      expect(value).not.toContain('/');
    }
    expect(text).not.toContain(TOKEN);
  });
});

describe('METRICS_ENABLED=false', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ METRICS_ENABLED: 'false', METRICS_TOKEN: TOKEN });
  });
  afterAll(async () => server?.stop());

  it('is a 404 in the error envelope, token or not', async () => {
    for (const headers of [{}, { authorization: `Bearer ${TOKEN}` }] as Array<Record<string, string>>) {
      const res = await fetch(`${server.baseUrl}/metrics`, { headers });
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('resource_not_found');
    }
  });
});

describe('beside a background thread', () => {
  let engine: EngineProcess;
  let gateway: GatewayProcess;
  beforeAll(async () => {
    engine = await spawnEngine();
    gateway = await spawnGateway(engine.uri, { BACKGROUND_THREAD: 'true' });
  }, 120_000);
  afterAll(async () => {
    await gateway?.kill();
    await engine?.kill();
  });

  it("the timers that thread fires are in the HTTP thread's answer, and the process metrics once", async () => {
    const acct = await createAccount(gateway.url);
    const pi = await createPayment(acct.api, expressBody('923000000'));
    await waitFor(async () => (await acct.api.get(`/payment_intents/${pi.id}`)).body.status, (s) => s === 'SUCCEEDED', 60_000, 200);
    const read = async () => parseMetrics(await (await fetch(`${gateway.url}/metrics`)).text());
    // Only the background thread polls for due timers here: the rail's +2 s and +5 s steps.
    const samples = await waitFor(read, (s) => (valueOf(s, 'pgw_timer_lateness_seconds_count') ?? 0) >= 2, 10_000, 200);
    expect(valueOf(samples, 'pgw_payments_final_total', { method: 'multicaixa_express', status: 'SUCCEEDED' })).toBe(1);
    expect(valueOf(samples, 'pgw_payments_created_total', { method: 'multicaixa_express' })).toBe(1);
    // Summed over both threads, the process's CPU would count twice: it is the HTTP thread's alone.
    expect(samples.filter((s) => s.name === 'process_cpu_user_seconds_total')).toHaveLength(1);
    expect(valueOf(samples, 'pgw_database_up')).toBe(1);
  });

  it.skipIf(!hasPromtool)('the merged answer passes promtool check metrics', async () => {
    const text = await (await fetch(`${gateway.url}/metrics`)).text();
    const check = spawnSync(PROMTOOL, ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(check.stdout + check.stderr).toBe('');
    expect(check.status).toBe(0);
  });
});
