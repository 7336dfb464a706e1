import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createAccount, idempotencyKey } from '../support/accounts';
import { freePort, ROOT } from '../support/processes';
import { startReceiver } from '../support/receiver';

/**
 * What `npm start` runs: start.mjs, which finds nothing stale and runs the esbuild bundle (build.mjs →
 * dist/main.js), started as its own process with
 * a memory-only store. Everything that finds files at run time (the contract, the GraphQL schema, the
 * page assets, packages served from node_modules) and the bundled npm packages (express, mongoose,
 * Apollo, the generated validators) are exercised over real HTTP.
 */
describe('compiled start (npm run build, then npm start\'s node start.mjs)', () => {
  let child: ChildProcess;
  let url: string;
  let output = '';

  beforeAll(async () => {
    await promisify(execFile)(process.execPath, ['build.mjs'], { cwd: ROOT, timeout: 120_000 });
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    // npm start's node flags, from its command line in package.json.
    const start = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
    const words = start.split(/\s+/);
    const nodeFlags = words.filter((w) => w.startsWith('--'));
    // Its entry, start.mjs: the staleness check (nothing stale: just built), then dist/main.js.
    const entry = words[words.length - 1]!;
    expect(entry).toBe('start.mjs');
    child = spawn(process.execPath, [...nodeFlags, entry], {
      cwd: ROOT,
      env: { ...process.env, VITEST: '', NODE_ENV: 'production', LOG_LEVEL: 'info', PORT: String(port), HOST: '127.0.0.1', DATA_DIR: '', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', BACKGROUND_THREAD: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`start.mjs exited (${child.exitCode}) before it was ready:\n${output}`);
      if (Date.now() > deadline) throw new Error(`start.mjs not ready within 60 s:\n${output}`);
      try {
        if ((await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) })).status === 200) break;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 180_000);

  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it('starts the embedded engine from the launcher, before the gateway bundle loads (src/start.ts)', () => {
    // dist/main.js is the launcher; the gateway (dist/gateway.js) took the engine it started.
    const started = output.split('\n').find((line) => line.includes('started the embedded MongoDB-compatible engine'));
    expect(started, output).toBeDefined();
    expect(JSON.parse(started!)).toMatchObject({ startedEarly: true, dataDir: null });
  });

  it('leaves the OpenTelemetry SDK out of the bundle: a start with tracing off never parses it (src/tracing)', () => {
    const bundle = readFileSync(path.join(ROOT, 'dist/gateway.js'), 'utf8');
    expect(bundle).toContain('import("@opentelemetry/sdk-trace-node")');
    expect(bundle).not.toContain('class NodeTracerProvider');
    expect(output).not.toContain('tracing on');
  });

  it('answers /readyz and serves the contract as YAML and JSON', async () => {
    expect(await (await fetch(`${url}/readyz`)).json()).toEqual({ status: 'ok', database: 'up' });
    const yaml = parse(await (await fetch(`${url}/openapi.yaml`)).text());
    const json = await (await fetch(`${url}/openapi.json`)).json();
    expect(json).toEqual(yaml);
    expect(Object.keys(json.paths)).toContain('/payment_intents');
  });

  it('serves the docs page and its swagger-ui assets from node_modules', async () => {
    const docs = await fetch(`${url}/docs`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('/docs/assets/swagger-ui-bundle.js');
    const asset = await fetch(`${url}/docs/assets/swagger-ui-bundle.js`);
    expect(asset.status).toBe(200);
    expect((await asset.text()).length).toBeGreaterThan(100_000);
  });

  it('serves the payment pages assets from src/pages/assets', async () => {
    for (const file of ['pay.js', 'pay.css']) {
      const res = await fetch(`${url}/pay-assets/${file}`);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(readFileSync(path.join(ROOT, 'src/pages/assets', file), 'utf8'));
    }
  });

  it('answers REST (validated against the contract) and a GraphQL query, and serves GraphiQL', async () => {
    const account = await createAccount(url, 'compiled start');
    const intent = await account.api.post(
      '/payment_intents',
      { amount: 5000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000000' } },
      { idempotencyKey: idempotencyKey() },
    );
    expect(intent.status).toBe(201);

    const gql = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${account.sk}` },
      body: JSON.stringify({ query: `{ account { id } paymentIntent(id: ${JSON.stringify(intent.body.id)}) { id amount } }` }),
    });
    expect(gql.status).toBe(200);
    expect(await gql.json()).toEqual({ data: { account: { id: account.id }, paymentIntent: { id: intent.body.id, amount: 5000 } } });

    const page = await fetch(`${url}/graphql`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('/graphql/assets/graphiql.min.js');
    const graphiql = await fetch(`${url}/graphql/assets/graphiql.min.js`);
    expect(graphiql.status).toBe(200);
    expect((await graphiql.text()).length).toBeGreaterThan(100_000);
  });

  it('runs the timers in its background thread: the rail reaches SUCCEEDED at +5 s and its webhook arrives (src/background)', async () => {
    // The HTTP thread runs no poller beside a background thread: the rail moving on on its own is the
    // background thread's work, and its webhook is sent from there. Readiness does not wait for that
    // thread (src/background/thread.ts): on a loaded machine it says so seconds after /readyz.
    const deadline = Date.now() + 30_000;
    while (!output.includes('background thread running') && child.exitCode === null && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(output).toContain('background thread running');
    const receiver = await startReceiver();
    try {
      const account = await createAccount(url, 'background thread');
      expect((await account.api.post('/webhook_endpoints', { url: receiver.url, events: ['payment.succeeded'] })).status).toBe(201);
      const intent = await account.api.post(
        '/payment_intents',
        { amount: 7000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000000' } },
        { idempotencyKey: idempotencyKey() },
      );
      expect(intent.status).toBe(201);
      const [hook] = await receiver.waitFor((r) => r.rawBody.includes(intent.body.id), 1, 30_000);
      expect(JSON.parse(hook!.rawBody)).toMatchObject({ type: 'payment.succeeded', data: { id: intent.body.id, status: 'SUCCEEDED' } });
      const final = await account.api.get(`/payment_intents/${intent.body.id}`);
      expect(final.body.status).toBe('SUCCEEDED');
      // Fired at its due time or after (how late is bench:rail's measure, not a test's).
      expect(Date.parse(final.body.updated_at) - Date.parse(final.body.created_at)).toBeGreaterThanOrEqual(5_000);
    } finally {
      await receiver.close();
    }
  });

  it('runs a sandbox clock advance in the thread that serves it, beside the background thread', async () => {
    const account = await createAccount(url, 'clock beside the background thread');
    const intent = await account.api.post(
      '/payment_intents',
      { amount: 8000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000000' } },
      { idempotencyKey: idempotencyKey() },
    );
    expect(intent.status).toBe(201);
    expect((await account.api.post('/sandbox/clock/advance', { seconds: 10 })).status).toBe(200);
    // The advance runs every timer due in its span before it answers.
    const after = await account.api.get(`/payment_intents/${intent.body.id}`);
    expect(after.body.status).toBe('SUCCEEDED');
    expect(Date.parse(after.body.updated_at) - Date.parse(after.body.created_at)).toBe(5_000);
  });

  it('stops cleanly on SIGTERM', async () => {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).not.toMatch(/"level":(50|60)/);
  });
});
