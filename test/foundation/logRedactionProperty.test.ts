import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../support/accounts';
import { ROOT, spawnEngine, spawnGateway, type EngineProcess, type GatewayProcess } from '../support/processes';
import { gqlData } from '../graphql/support';
import { cookieData, signIn } from '../dashboard/sessionSupport';
import { Prng, seedFromEnv } from '../faults/support/prng';
import { luhnValid, SecretMaker, SHAPES, type Plant } from './logRedactionShapes';

/**
 * Issue 54, item 5: no secret is stored in a request log. Secrets drawn from a seeded PRNG are planted
 * in every shape of logRedactionShapes.ts (bodies, broken JSON, GraphQL variables and document
 * literals, paths, query strings; REST and GraphQL), twice over with different draws, against a real
 * gateway process; then none of them, nor any Luhn-valid run of 13-19 digits, shows in GET /v1/logs, in
 * GraphQL `logs`, in exactly what the dashboard's Logs view asks for (its document, sent with a
 * session cookie as the app sends it), or in the process's JSON log lines (every request logged).
 * The ordinary values planted beside them must still show, so a redaction that ate whole bodies
 * fails too. Replay a run with LOG_REDACTION_SEED=<the seed printed>.
 */
const SEED = seedFromEnv('LOG_REDACTION_SEED');
const ROUNDS = 2;
const LOGS_VIEW_DOCUMENT = readFileSync(path.join(ROOT, 'src/dashboard/app/documents/logs.graphql'), 'utf8');
const LOG_FIELDS = 'requestId method path status errorCode latencyMs createdAt source requestBody responseBody';

interface Planted extends Plant {
  requestId: string;
  status: number;
}

describe(`request logs hold no planted secret (LOG_REDACTION_SEED=${SEED})`, () => {
  let engine: EngineProcess;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    engine = await spawnEngine();
    gateway = await spawnGateway(engine.uri, { LOG_LEVEL: 'info' });
  }, 120_000);
  afterAll(async () => {
    await gateway?.stop();
    await engine?.kill();
  });

  it('in GET /v1/logs, GraphQL logs, the dashboard Logs view and the JSON log lines', { timeout: 180_000 }, async () => {
    console.log(`log redaction property test: LOG_REDACTION_SEED=${SEED}`);
    const planted: Planted[] = [];
    const views: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const acct = await createAccount(gateway.url);
      const mine: Planted[] = [];
      for (const [shape, draw] of Object.entries(SHAPES)) {
        const maker = new SecretMaker(new Prng(SEED, round * 1000 + mine.length));
        const plant = { shape, ...draw(maker), secrets: maker.secrets, kept: maker.kept };
        mine.push(await send(acct, plant));
      }
      // One key's entries fit the Logs view's 50 (its own requests hidden, as the view starts).
      expect(mine.length + 2).toBeLessThanOrEqual(50);
      views.push(...(await everyView(acct, mine)));
      planted.push(...mine);
    }
    expect(Object.keys(SHAPES).length).toBeGreaterThanOrEqual(30);

    const secrets = planted.flatMap((p) => p.secrets.map((secret) => ({ secret, shape: p.shape })));
    const shown = views.join('\n');
    for (const { secret, shape } of secrets) {
      expect(secret.length, shape).toBeGreaterThanOrEqual(6);
      expect(shown.includes(secret), `${shape}: ${secret} shown in a log view`).toBe(false);
    }
    expect(luhnRuns(shown)).toEqual([]);

    // The JSON log lines: a line per request (their ids are there), none of the secrets.
    const lines = gateway.output();
    for (const p of planted) expect(lines, `${p.shape}: no log line`).toContain(p.requestId);
    for (const { secret, shape } of secrets) expect(lines.includes(secret), `${shape}: ${secret} in the JSON log lines`).toBe(false);
    expect(luhnRuns(lines)).toEqual([]);
  });
});

async function send(acct: TestAccount, plant: Omit<Planted, 'requestId' | 'status'>): Promise<Planted> {
  const headers: Record<string, string> = { authorization: `Bearer ${acct.sk}` };
  if (plant.body !== undefined) headers['content-type'] = 'application/json';
  if (plant.path === '/v1/payment_intents' && plant.method === 'POST') headers['idempotency-key'] = `redaction-${plant.kept[0]}`;
  const res = await fetch(`${acct.api.baseUrl}${plant.path}`, { method: plant.method, headers, body: plant.body });
  await res.text();
  // Never a crash on odd input; 401 and 429 are not logged (they are counted), so none is wanted here.
  expect(res.status, `${plant.shape}: ${plant.method} ${plant.path}`).toBeLessThan(500);
  expect([401, 429], plant.shape).not.toContain(res.status);
  return { ...plant, requestId: res.headers.get('request-id')!, status: res.status };
}

/**
 * The texts of the three views of one key's log (REST, GraphQL, the dashboard's Logs document with and
 * without its own requests), after checking each planted request is in each, its ordinary values kept.
 */
async function everyView(acct: TestAccount, planted: Planted[]): Promise<string[]> {
  const rest = await acct.api.get('/logs?limit=100&include_dashboard=true');
  expect(rest.status).toBe(200);
  const graphql = await gqlData(acct.api.baseUrl, acct.sk, `{ logs(first: 100, includeDashboard: true) { ${LOG_FIELDS} } }`);
  const session = await signIn(acct.api.baseUrl, acct.sk);
  expect(session.status, session.text).toBe(200);
  const dashboard = await cookieData(acct.api.baseUrl, session.cookie!, LOGS_VIEW_DOCUMENT, { includeDashboard: false });
  const dashboardAll = await cookieData(acct.api.baseUrl, session.cookie!, LOGS_VIEW_DOCUMENT, { includeDashboard: true });

  const byId = (entries: Array<Record<string, any>>, idField: string) => new Map(entries.map((e) => [e[idField] as string, e]));
  const lists: Array<[string, Map<string, Record<string, any>>, string, string]> = [
    ['GET /v1/logs', byId(rest.body.data, 'request_id'), 'request_body', 'path'],
    ['GraphQL logs', byId(graphql.logs, 'requestId'), 'requestBody', 'path'],
    ['dashboard Logs view', byId(dashboard.logs, 'requestId'), 'requestBody', 'path'],
  ];
  for (const [view, entries, bodyField, pathField] of lists) {
    for (const p of planted) {
      const entry = entries.get(p.requestId);
      expect(entry, `${view}: ${p.shape} not listed`).toBeDefined();
      for (const kept of p.kept) expect(String(entry![bodyField]), `${view}: ${p.shape} lost ${kept}`).toContain(kept);
      if (p.storedIn === 'path') expect(entry![pathField], `${view}: ${p.shape}`).toContain('[REDACTED]');
      if (p.storedIn === 'body') expect(String(entry![bodyField]), `${view}: ${p.shape} body`).toContain('[REDACTED]');
    }
  }
  return [rest.text, JSON.stringify(graphql), JSON.stringify(dashboard), JSON.stringify(dashboardAll)];
}

/** Every run of 13-19 digits (nothing but digits either side) that passes the Luhn check. */
function luhnRuns(text: string): string[] {
  return [...text.matchAll(/(?<!\d)\d{13,19}(?!\d)/g)].map((m) => m[0]).filter(luhnValid);
}
