import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAccount, type TestAccount } from '../support/accounts';
import { advanceClock, createPayment, expressBody, referenceBody } from '../support/payments';
import { freePort, ROOT } from '../support/processes';
import { startReceiver, type Receiver } from '../support/receiver';
import { startGatewayWithJobs, type TestServer } from '../support/server';
import { waitFor } from '../support/wait';
import { createEndpoint } from '../support/webhooks';

/**
 * Debian's real Prometheus scraping a real gateway (ephemeral ports, 1 s scrapes, METRICS_TOKEN as a
 * bearer credential): after a scripted load, the counters and histogram buckets it stored, read back
 * through its HTTP API, are the ones the load must have produced. And promtool on the /metrics text and
 * on deploy/alerts.yml. Skipped (loudly) only where prometheus or promtool is not installed: `.ci/run`
 * installs Debian's `prometheus` package, which brings both.
 *
 * The load, on two accounts:
 * - A, in real time: express payments of every rail scenario but the 30 s one (923000000 twice,
 *   923000001, 923000003, 923000004), and a webhook endpoint for `payment.succeeded` whose receiver
 *   answers 500 once, then 200 (the failed delivery is retried at +10 s);
 * - B, by its sandbox clock: 923000002 (UNKNOWN, then SUCCEEDED at +30 s), three reference payments
 *   (one paid, one cancelled, one left to expire at +72 h), and an endpoint for `payment.expired` on a
 *   port nobody listens on, which the advance past +72 h and then past its retries (+10 s, +60 s,
 *   +5 min) dead-letters;
 * - 25 requests without a key with the per-IP limit at 20: 20 answers 401, 5 answers 429;
 * - one GraphQL query, and one event stream held open for a while.
 */
vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });

const execFileAsync = promisify(execFile);
const PROMETHEUS = '/usr/bin/prometheus';
const PROMTOOL = '/usr/bin/promtool';
const missing = [PROMETHEUS, PROMTOOL].filter((bin) => !fs.existsSync(bin));
if (missing.length > 0) console.warn(`SKIPPED test/metrics/prometheus.test.ts: ${missing.join(', ')} not installed (Debian package prometheus; .ci/run installs it)`);

const TOKEN = 'prometheus-test-metrics-token-7f3e';
const UNAUTHENTICATED_LIMIT = 20;

describe.skipIf(missing.length > 0)('Prometheus scraping a gateway', () => {
  let server: TestServer;
  let prometheus: ChildProcess;
  let promUrl: string;
  let dir: string;
  let receiver: Receiver;
  let a: TestAccount;
  let b: TestAccount;

  /** One instant query; the vector's samples as label sets with their values. */
  async function query(expr: string): Promise<Array<{ metric: Record<string, string>; value: number }>> {
    const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await res.json()) as { status: string; error?: string; data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> } };
    if (body.status !== 'success') throw new Error(`${expr}: ${body.error}`);
    return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
  }

  /** The one value of `expr`, polled until Prometheus has it equal to `want` (scrapes come every second). */
  async function eventually(expr: string, want: number): Promise<void> {
    let seen: unknown;
    try {
      await waitFor(
        async () => (seen = await query(expr)),
        (r) => r.length === 1 && r[0]!.value === want,
        60_000,
        500,
      );
    } catch {
      throw new Error(`${expr}: wanted ${want}, Prometheus has ${JSON.stringify(seen)}`);
    }
  }

  beforeAll(async () => {
    server = await startGatewayWithJobs({ METRICS_TOKEN: TOKEN, PUBLIC_RATE_LIMIT_PER_MINUTE: String(UNAUTHENTICATED_LIMIT) });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-prometheus-'));
    fs.writeFileSync(path.join(dir, 'token'), TOKEN);
    const target = new URL(server.baseUrl).host;
    // deploy/prometheus.yml's job, with this gateway as its target, 1 s scrapes and the token file.
    fs.writeFileSync(
      path.join(dir, 'prometheus.yml'),
      [
        'global: {scrape_interval: 1s, evaluation_interval: 1s}',
        'scrape_configs:',
        '  - job_name: pgw',
        '    metrics_path: /metrics',
        `    authorization: {type: Bearer, credentials_file: ${path.join(dir, 'token')}}`,
        `    static_configs: [{targets: ['${target}']}]`,
        '',
      ].join('\n'),
    );
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    prometheus = spawn(PROMETHEUS, [`--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await waitFor(
      () => fetch(`${promUrl}/-/ready`).then((r) => r.status, () => 0),
      (s) => s === 200,
      60_000,
      200,
    );
    // The target is up: Prometheus authenticates with the token (a 401 would leave up at 0).
    await eventually('up{job="pgw"}', 1);

    receiver = await startReceiver();
    let answered = 0;
    receiver.reply = () => ({ status: answered++ === 0 ? 500 : 200 });
    a = await createAccount(server.baseUrl);
    b = await createAccount(server.baseUrl);
  });

  afterAll(async () => {
    if (prometheus && prometheus.exitCode === null) {
      const exited = new Promise((resolve) => prometheus.once('exit', resolve));
      prometheus.kill('SIGTERM');
      await exited;
    }
    await receiver?.close();
    await server?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('counts what the load did: payments, timers, webhooks, refusals, requests, streams, the database', async () => {
    await createEndpoint(a.api, receiver.url, { events: ['payment.succeeded'] });
    const deadPort = await freePort();
    await createEndpoint(b.api, `http://127.0.0.1:${deadPort}/hooks`, { events: ['payment.expired'] });

    // A, real time: the rail runs on the poller.
    const express = ['923000000', '923000000', '923000001', '923000003', '923000004'];
    const onA = await Promise.all(express.map((mobile) => createPayment(a.api, expressBody(mobile))));
    // An event stream open while Prometheus scrapes: on a reference payment, which stays PENDING.
    const held = await createPayment(b.api, referenceBody());
    const stream = new AbortController();
    const sse = await fetch(`${server.baseUrl}/v1/payment_intents/${held.id}/events`, { headers: { authorization: `Bearer ${b.sk}` }, signal: stream.signal });
    expect(sse.status).toBe(200);
    await eventually('pgw_realtime_connections{kind="sse"}', 1);
    stream.abort();
    await sse.body?.cancel().catch(() => undefined);
    await eventually('pgw_realtime_connections{kind="sse"}', 0);

    // B, by its clock: 923000002 succeeds at +30 s; one reference paid, one cancelled, `held` expires.
    await createPayment(b.api, expressBody('923000002'));
    const paid = await createPayment(b.api, referenceBody());
    expect((await b.api.post('/sandbox/simulate/reference_paid', { reference: paid.reference.number })).status).toBe(200);
    const cancelled = await createPayment(b.api, referenceBody());
    expect((await b.api.post(`/payment_intents/${cancelled.id}/cancel`, {})).status).toBe(200);
    await advanceClock(b.api, 72 * 3600 + 60);
    // The expiry's delivery was refused (nobody listens): its three retries, then DEAD_LETTER.
    await advanceClock(b.api, 400);

    // Without a key, per client IP: 20 answers 401, then 429.
    for (let i = 0; i < UNAUTHENTICATED_LIMIT + 5; i++) await fetch(`${server.baseUrl}/v1/payment_intents`);

    const gql = await fetch(`${server.baseUrl}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.sk}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(gql.status).toBe(200);

    // A's rail to its end, and its two succeeded payments' webhooks delivered (one after its retry).
    for (const p of onA) await waitFor(async () => (await a.api.get(`/payment_intents/${p.id}`)).body.status, (s) => s === 'SUCCEEDED' || s === 'FAILED', 60_000, 250);
    await receiver.waitFor(() => true, 3, 60_000);

    await eventually('pgw_payments_created_total{method="multicaixa_express"}', 6);
    await eventually('pgw_payments_created_total{method="multicaixa_reference"}', 3);
    await eventually('pgw_payments_final_total{method="multicaixa_express",status="SUCCEEDED"}', 3);
    await eventually('pgw_payments_final_total{method="multicaixa_express",status="FAILED"}', 3);
    await eventually('pgw_payments_final_total{method="multicaixa_reference",status="SUCCEEDED"}', 1);
    await eventually('pgw_payments_final_total{method="multicaixa_reference",status="CANCELLED"}', 1);
    await eventually('pgw_payments_final_total{method="multicaixa_reference",status="EXPIRED"}', 1);
    await eventually('count(pgw_payments_final_total)', 5);

    await eventually('pgw_webhook_attempts_total{outcome="http_error"}', 1);
    await eventually('pgw_webhook_attempts_total{outcome="delivered"}', 2);
    await eventually('pgw_webhook_attempts_total{outcome="no_response"}', 4);
    await eventually('pgw_webhook_dead_letters_total', 1);
    // Two deliveries delivered; the retried one waited its +10 s, so at most one lag is under 5 s.
    await eventually('pgw_webhook_delivery_lag_seconds_count', 2);
    await eventually('pgw_webhook_delivery_lag_seconds_bucket{le="+Inf"}', 2);
    expect((await query('pgw_webhook_delivery_lag_seconds_bucket{le="5"}'))[0]!.value).toBeLessThanOrEqual(1);
    expect((await query('pgw_webhook_delivery_lag_seconds_sum'))[0]!.value).toBeGreaterThanOrEqual(10);
    // The retry waited as RETRYING for 10 s, seen by ten scrapes; all delivered or dead now.
    expect((await query('max_over_time(pgw_webhook_backlog[10m])'))[0]!.value).toBeGreaterThanOrEqual(1);
    await eventually('pgw_webhook_backlog', 0);

    await eventually('pgw_rate_limited_total{scope="ip"}', 5);
    await eventually('pgw_http_requests_total{operation="listPaymentIntents",status="401"}', UNAUTHENTICATED_LIMIT);
    await eventually('pgw_http_requests_total{operation="listPaymentIntents",status="429"}', 5);
    await eventually('pgw_http_requests_total{operation="createPaymentIntent",status="201"}', 9);
    await eventually('pgw_http_request_duration_seconds_count{operation="createPaymentIntent"}', 9);
    await eventually('pgw_graphql_operations_total{type="query",outcome="ok"}', 1);

    // Timers fired by A's poller, each rail step: at least 2 per payment but 923000004's 1 (webhook
    // retries too); B's ran in its advances, which lateness leaves out. Buckets are cumulative to +Inf.
    const lateness = await query('pgw_timer_lateness_seconds_bucket');
    const count = (await query('pgw_timer_lateness_seconds_count'))[0]!.value;
    expect(count).toBeGreaterThanOrEqual(9);
    // Prometheus answers in no particular order: by bound, +Inf last.
    const byLe = new Map(lateness.sort((x, y) => bound(x.metric.le) - bound(y.metric.le)).map((s) => [s.metric.le, s.value]));
    expect([...byLe.keys()]).toEqual(['0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '30', '60', '+Inf']);
    expect(byLe.get('+Inf')).toBe(count);
    const values = [...byLe.values()];
    for (let i = 1; i < values.length; i++) expect(values[i]!).toBeGreaterThanOrEqual(values[i - 1]!);

    await eventually('pgw_database_up', 1);
    expect((await query('pgw_database_command_duration_seconds_count{command="insert"}'))[0]!.value).toBeGreaterThan(0);
    expect((await query('pgw_timers_due')).length).toBe(1);
    expect((await query('process_cpu_user_seconds_total{job="pgw"}')).length).toBe(1);
  });

  it('promtool check metrics passes on the /metrics text', async () => {
    const text = await (await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    expect(text).toContain('pgw_payments_final_total');
    const check = spawn(PROMTOOL, ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    check.stdout.on('data', (c: Buffer) => (out += c));
    check.stderr.on('data', (c: Buffer) => (out += c));
    check.stdin.end(text);
    const code = await new Promise<number | null>((resolve) => check.on('close', resolve));
    expect(out).toBe('');
    expect(code).toBe(0);
  });

  it("deploy/grafana-dashboard.json: every panel's query runs, on metrics the gateway serves", async () => {
    const dashboard = JSON.parse(fs.readFileSync(path.join(ROOT, 'deploy/grafana-dashboard.json'), 'utf8')) as { panels: Array<{ title: string; targets: Array<{ expr: string }> }> };
    const text = await (await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr));
    expect(exprs.length).toBeGreaterThanOrEqual(20);
    for (const expr of exprs) {
      // Grafana's variables as the dashboard's defaults would set them.
      const concrete = expr.replaceAll('$job', 'pgw').replaceAll('$instance', '.*').replaceAll('$__rate_interval', '1m');
      const result = await query(concrete);
      expect(result.length, concrete).toBeGreaterThan(0);
      for (const [name] of concrete.matchAll(/\b(?:pgw|process|nodejs)_[a-z0-9_]+/g)) expect(text, `${name} in ${concrete}`).toMatch(new RegExp(`^${name}[{ ]`, 'm'));
    }
  });

  it('promtool check rules and test rules on deploy/', async () => {
    const checked = await execFileAsync(PROMTOOL, ['check', 'rules', path.join(ROOT, 'deploy/alerts.yml')]);
    expect(checked.stdout).toContain('SUCCESS: 5 rules found');
    const tested = await execFileAsync(PROMTOOL, ['test', 'rules', path.join(ROOT, 'deploy/alerts.test.yml')]);
    expect(tested.stdout).toContain('SUCCESS');
    const config = await execFileAsync(PROMTOOL, ['check', 'config', path.join(ROOT, 'deploy/prometheus.yml')]);
    expect(config.stdout).toContain('is valid prometheus config file syntax');
  });
});

function bound(le: string | undefined): number {
  return le === '+Inf' ? Infinity : Number(le);
}
