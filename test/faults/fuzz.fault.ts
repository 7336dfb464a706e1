import { readFileSync } from 'node:fs';
import http from 'node:http';
import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOperation, getValidator } from '../../src/operations/contract';
import { spawnEngine, type EngineProcess } from '../support/processes';
import { requiredResponseHeaders } from '../support/client';
import { startTestServer, type TestServer } from '../support/server';
import { startReceiver, type Receiver } from '../support/receiver';
import { loadContract, type OperationSpec } from './support/contract';
import { createFuzzFixtures } from './support/fixtures';
import type { FuzzFixtures } from './support/generate';
import { buildRequest, type WireRequest } from './support/mutate';
import { Prng, seedFromEnv } from './support/prng';
import { rawRequest, type RawResponse } from './support/rawHttp';

/**
 * Contract-driven fuzzing: every request is derived from openapi.yaml (a valid request built from the
 * schemas, examples and real objects of the account), then mutated in exactly one way. The gateway
 * must never answer 5xx, every error must be the contract's envelope with a known code, requests the
 * contract refuses must not be accepted, and the process must stay up with bounded memory.
 *
 * Reproduce: FUZZ_SEED=<seed> (printed) replays a run; FUZZ_ONLY=<i,j,…> replays single requests;
 * FUZZ_COUNT sets the number of requests (default 10 500).
 */
const SEED = seedFromEnv();
const COUNT = Number(process.env.FUZZ_COUNT ?? 10_500);
const ONLY = process.env.FUZZ_ONLY?.split(',').map(Number);
const CONCURRENCY = 16;
const RSS_GROWTH_LIMIT_MB = 300;

interface Finding {
  kind: string;
  req: WireRequest;
  res?: RawResponse;
  message: string;
}

let engine: EngineProcess;
let server: TestServer;
let receiver: Receiver;
const heartbeatFailures: string[] = [];
let fx: FuzzFixtures;
const contract = loadContract();
const findings: Finding[] = [];
const statusCounts = new Map<number, number>();
const mutationCounts = new Map<string, number>();
const opTwoXx = new Map<string, number>();
let sent = 0;
const slowest: Array<{ ms: number; req: WireRequest }> = [];
let rssBefore = 0;
let rssAfter = 0;
let engineRssBefore = 0;
let engineRssAfter = 0;
let heapAfter = 0;
let durationMs = 0;

beforeAll(async () => {
  receiver = await startReceiver();
  // The database runs in its own process, so that this process's memory is the gateway's alone.
  engine = await spawnEngine();
  server = await startTestServer({ RATE_LIMIT_PER_MINUTE: '100000000', MONGODB_URI: engine.uri });
  ({ fx } = await createFuzzFixtures(server.baseUrl, receiver.url));
  // The gateway's view of the database: a monitor that loses the server clears the connection pool.
  mongoose.connection.getClient().on('serverHeartbeatFailed', (e: { failure?: Error }) => heartbeatFailures.push(e.failure?.message ?? 'unknown'));

  console.log(`fuzz: seed ${SEED} (replay with FUZZ_SEED=${SEED}), ${ONLY ? `only #${ONLY.join(',')}` : `${COUNT} requests`}, concurrency ${CONCURRENCY}`);
  rssBefore = process.memoryUsage().rss;
  engineRssBefore = rssOf(engine.pid);
  const started = Date.now();
  // Every operation but the sandbox reset: a valid one deletes the fixtures the rest of the run reads
  // (test/sandbox/reset.test.ts covers its refusals and effects).
  const fuzzed = contract.operations.filter((op) => op.operationId !== 'resetSandbox');
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const indices = ONLY ?? Array.from({ length: COUNT }, (_, i) => i);
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < indices.length) {
        const index = indices[next++]!;
        const rng = new Prng(SEED, index);
        const op = rng.pick(fuzzed);
        const req = buildRequest(index, contract, op, fx, rng);
        await sendAndCheck(op, req, agent);
      }
    }),
  );
  agent.destroy();
  durationMs = Date.now() - started;
  rssAfter = process.memoryUsage().rss;
  engineRssAfter = rssOf(engine.pid);
  heapAfter = process.memoryUsage().heapUsed;
}, 600_000);

afterAll(async () => {
  printSummary();
  await server?.stop();
  await receiver?.close();
  await engine?.stop();
});

/** Resident memory of another process (Linux), 0 when unknown. */
function rssOf(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

async function sendAndCheck(op: OperationSpec, req: WireRequest, agent: http.Agent): Promise<void> {
  mutationCounts.set(req.mutation, (mutationCounts.get(req.mutation) ?? 0) + 1);
  let res: RawResponse;
  const t0 = Date.now();
  try {
    res = await rawRequest(server.baseUrl, req, agent);
    const ms = Date.now() - t0;
    slowest.push({ ms, req });
    slowest.sort((x, y) => y.ms - x.ms);
    slowest.length = Math.min(slowest.length, 8);
  } catch (err) {
    const message = (err as Error).message;
    // node:http refuses some requests before sending them (invalid path characters); those are not the gateway's.
    if (/ERR_UNESCAPED_CHARACTERS|ERR_INVALID_CHAR|Invalid character/.test(`${(err as { code?: string }).code} ${message}`)) return;
    findings.push({ kind: 'no answer', req, message });
    return;
  }
  sent++;
  statusCounts.set(res.status, (statusCounts.get(res.status) ?? 0) + 1);
  if (res.status >= 200 && res.status < 300 && req.method === op.method) opTwoXx.set(op.operationId, (opTwoXx.get(op.operationId) ?? 0) + 1);
  for (const f of checkResponse(op, req, res)) findings.push(f);
}

function checkResponse(op: OperationSpec, req: WireRequest, res: RawResponse): Finding[] {
  const out: Finding[] = [];
  const add = (kind: string, message: string) => out.push({ kind, req, res, message });
  const type = String(res.headers['content-type'] ?? '');
  const requestId = res.headers['request-id'];
  if (res.status >= 500) add('5xx', `answered ${res.status}`);
  if (typeof requestId !== 'string' || !requestId.startsWith('req_')) add('no Request-Id', 'the response has no Request-Id header');

  if (res.status >= 400) {
    // Root routes (health, pages) declare their own error bodies (HTML pages, the Health object).
    const rootDeclared = op.prefix === '' && req.method === op.method && servedBy(op, req.path) && String(res.status) in op.responses;
    if (!rootDeclared) {
      let body: any;
      try {
        body = type.includes('application/json') ? JSON.parse(res.text) : undefined;
      } catch {
        body = undefined;
      }
      const err = body?.error;
      if (!err || typeof err.code !== 'string' || typeof err.message !== 'string' || typeof err.request_id !== 'string') {
        add('not an error envelope', `${res.status} ${type}: ${res.text.slice(0, 200)}`);
      } else {
        if (!contract.errorCodes.includes(err.code)) add('unknown error code', `code ${err.code}`);
        if (err.request_id !== requestId) add('request_id mismatch', `${err.request_id} vs header ${requestId}`);
        if (Object.keys(body).length !== 1 || Object.keys(err).length !== 3) add('extra envelope fields', JSON.stringify(body).slice(0, 200));
      }
    }
  }
  if (req.invalid && res.status >= 200 && res.status < 300) add('invalid request accepted', `answered ${res.status} to a request the contract refuses`);
  if (req.refusal && (res.status !== req.refusal.status || !res.text.includes(`"code":"${req.refusal.code}"`))) {
    add('wrong refusal', `expected ${req.refusal.status} ${req.refusal.code}`);
  }

  const pathname = req.path.split('?')[0]!;
  if (pathname.startsWith('/v1/') && res.status < 500) {
    let parsed: unknown = res.text;
    if (res.truncated) return out;
    if (type.includes('application/json')) {
      try {
        parsed = JSON.parse(res.text);
      } catch {
        add('bad JSON answer', res.text.slice(0, 200));
      }
    }
    const problem = contractProblem(req.method, pathname, res.status, type, parsed);
    if (problem) add('off contract', problem.slice(0, 400));
    // The spec: every response carries the rate-limit headers (openapi.yaml marks them required; only a
    // 500 may lack them). Unknown routes declare nothing, but carry them too.
    const found = findOperation(req.method, pathname.slice(3));
    const required = found ? requiredResponseHeaders(found.operationId, res.status) : ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];
    const missing = required.filter((name) => res.headers[name.toLowerCase()] === undefined);
    if (missing.length) add('required header missing', `${res.status} without ${missing.join(', ')}`);
  }
  return out;
}

function servedBy(op: OperationSpec, path: string): boolean {
  const pathname = path.split('?')[0]!;
  const template = (op.prefix + op.path).replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
  return new RegExp(`^${template}/?$`).test(pathname);
}

/** Whether the answer is one openapi.yaml declares for the operation serving this path (status, content type, JSON body). */
function contractProblem(method: string, pathname: string, status: number, type: string, body: unknown): string | undefined {
  const found = findOperation(method, pathname.slice(3));
  if (!found) {
    const err = (body as { error?: { code?: unknown } })?.error;
    return status === 404 && err?.code === 'resource_not_found' ? undefined : `no operation serves ${method} ${pathname}, and the answer is ${status}, not 404 resource_not_found`;
  }
  const declared = (found.responseContentTypes as Record<string, readonly string[]>)[String(status)];
  if (!declared) return `${found.operationId} answered ${status}, which openapi.yaml does not declare for it`;
  const mediaType = type.split(';')[0]!.trim();
  if (declared.length && !declared.includes(mediaType)) return `${found.operationId} ${status} answered ${mediaType}; declared: ${declared.join(', ')}`;
  if (mediaType !== 'application/json') return undefined;
  const name = (found.validators.responses as Record<string, string | undefined>)[String(status)];
  if (!name) return undefined;
  const validate = getValidator('responses', name);
  return validate(body) ? undefined : `${found.operationId} ${status} body does not match openapi.yaml: ${JSON.stringify(validate.errors).slice(0, 300)}`;
}

function describeRequest(f: Finding): string {
  const { req } = f;
  const body = req.body ? JSON.stringify(req.body.subarray(0, 300).toString('latin1')) + (req.body.length > 300 ? ` …(${req.body.length} bytes)` : '') : '(none)';
  const headers = Object.entries(req.headers).map(([k, v]) => `${k}: ${String(v).slice(0, 120)}`).join(' | ');
  return [
    `  [${f.kind}] #${req.index} ${req.operationId} ${req.mutation} (${req.detail.slice(0, 160)})`,
    `    replay: FUZZ_SEED=${SEED} FUZZ_ONLY=${req.index}`,
    `    ${req.method} ${req.path.slice(0, 300)}`,
    `    headers: ${headers}`,
    `    body: ${body}`,
    `    → ${f.res ? `${f.res.status} ${f.res.text.slice(0, 300)}` : 'no answer'}: ${f.message}`,
  ].join('\n');
}

/** One example per (kind, operation, mutation, status): enough to reproduce, short enough to read. */
function report(kinds: string[]): string {
  const seen = new Map<string, { f: Finding; n: number }>();
  for (const f of findings.filter((x) => kinds.includes(x.kind))) {
    const key = `${f.kind}|${f.req.operationId}|${f.req.mutation}|${f.res?.status}`;
    const cur = seen.get(key);
    if (cur) cur.n++;
    else seen.set(key, { f, n: 1 });
  }
  return [...seen.values()].map(({ f, n }) => `${describeRequest(f)}\n    (${n} like this)`).join('\n');
}

function printSummary(): void {

  const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
  const by = (m: Map<string | number, number>) => [...m.entries()].sort((x, y) => (x[0] > y[0] ? 1 : -1)).map(([k, v]) => `${k}=${v}`).join(' ');
  const fivexx = [...statusCounts.entries()].filter(([s]) => s >= 500).reduce((n, [, c]) => n + c, 0);
  console.log(
    [
      `fuzz summary: seed ${SEED}; ${sent} requests answered in ${(durationMs / 1000).toFixed(1)} s; 5xx=${fivexx}; findings=${findings.length}`,
      `  statuses: ${by(statusCounts)}`,
      `  mutations: ${by(mutationCounts)}`,
      `  operations with a 2xx answer: ${opTwoXx.size}/${contract.operations.length}`,
      `  slowest: ${slowest.map(({ ms, req }) => `#${req.index} ${req.operationId}/${req.mutation} ${ms} ms`).join(', ')}`,
      `  gateway rss before ${mb(rssBefore)}, after ${mb(rssAfter)} (growth ${mb(rssAfter - rssBefore)}); heap used after ${mb(heapAfter)}`,
      `  database process rss before ${mb(engineRssBefore)}, after ${mb(engineRssAfter)}; database heartbeat failures: ${heartbeatFailures.length}`,
    ].join('\n'),
  );
  const kinds = [...new Set(findings.map((f) => f.kind))];
  if (kinds.length) console.log(`fuzz findings:\n${report(kinds)}`);
}

describe(`fuzz (seed ${SEED})`, () => {
  it('sent at least 10 000 mutated requests (or the replayed ones) and every one was answered', () => {
    expect(findings.filter((f) => f.kind === 'no answer').map(describeRequest)).toEqual([]);
    expect(sent).toBeGreaterThanOrEqual(ONLY ? ONLY.length : 10_000);
  });

  it('never answered 5xx', () => {
    expect(report(['5xx'])).toBe('');
  });

  it('answered every error with the envelope {error:{code,message,request_id}} and a code of ErrorCode', () => {
    expect(report(['not an error envelope', 'unknown error code', 'request_id mismatch', 'extra envelope fields', 'no Request-Id'])).toBe('');
  });

  it('never accepted a request the contract refuses', () => {
    expect(report(['invalid request accepted'])).toBe('');
  });

  it('refused malformed integer query parameters (1e2, 0x10, +5, 5.0, " 5"…) with 400 invalid_request', () => {
    expect(report(['wrong refusal'])).toBe('');
  });

  it('answered only with statuses and bodies that openapi.yaml declares', () => {
    expect(report(['off contract', 'bad JSON answer'])).toBe('');
  });

  it('sent the headers openapi.yaml declares required (X-RateLimit-* on every /v1 answer)', () => {
    expect(report(['required header missing'])).toBe('');
  });

  it('reached the services: valid requests of the main operations succeeded', () => {
    if (ONLY) return;
    for (const id of ['createPaymentIntent', 'createRefund', 'createPaymentLink', 'createCheckoutSession', 'createWebhookEndpoint', 'createQrCode', 'listPaymentIntents', 'listEvents', 'getPaymentIntent']) {
      expect(opTwoXx.get(id) ?? 0, `${id} never answered 2xx`).toBeGreaterThan(0);
    }
  });

  it('kept its database connection (no monitor heartbeat failed, so no pool was cleared)', () => {
    expect(heartbeatFailures).toEqual([]);
  });

  it('is still alive and serving, with bounded memory growth', async () => {
    const health = await fetch(`${server.baseUrl}/healthz`);
    expect(health.status).toBe(200);
    const res = await fetch(`${server.baseUrl}/v1/payment_intents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fx.sk}`, 'content-type': 'application/json', 'idempotency-key': `after-fuzz-${SEED}` },
      body: JSON.stringify({ amount: 1_000, currency: 'AOA', payment_method: 'multicaixa_reference' }),
    });
    expect(res.status).toBe(201);
    // Nothing polluted Object.prototype in this process.
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((rssAfter - rssBefore) / 1024 / 1024).toBeLessThan(RSS_GROWTH_LIMIT_MB);
  });
});
