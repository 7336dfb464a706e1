import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createAccount } from '../support/accounts';
import { startTestServer, type TestServer } from '../support/server';

describe('system routes', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server?.stop());

  it('serves health, readiness, the contract and a docs page without a key', async () => {
    const health = await fetch(`${server.baseUrl}/healthz`);
    expect(health.status).toBe(200);
    const ready = await fetch(`${server.baseUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok', database: 'up' });
    const yaml = parse(await (await fetch(`${server.baseUrl}/openapi.yaml`)).text());
    expect(yaml.openapi).toMatch(/^3\.1/);
    const json = await (await fetch(`${server.baseUrl}/openapi.json`)).json();
    expect(Object.keys(json.paths)).toContain('/payment_intents');
    // /openapi.json is generated/openapi.json (codegen): the same document as the YAML.
    expect(json).toEqual(yaml);
    const docs = await fetch(`${server.baseUrl}/docs`);
    const html = await docs.text();
    expect(html).toContain('/docs/assets/swagger-ui-bundle.js');
    expect(html).not.toMatch(/https?:\/\/(?!localhost)/);
    const asset = await fetch(`${server.baseUrl}/docs/assets/swagger-ui-bundle.js`);
    expect(asset.status).toBe(200);
  });
});

describe('maintenance mode', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ MAINTENANCE_MODE: 'true' });
  });
  afterAll(async () => server?.stop());

  it('answers 503 maintenance with Retry-After on the API while health stays up', async () => {
    const res = await fetch(`${server.baseUrl}/v1/payment_methods`);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('60');
    const body = await res.json();
    expect(body.error.code).toBe('maintenance');
    expect((await fetch(`${server.baseUrl}/healthz`)).status).toBe(200);
    await expect(createAccount(server.baseUrl)).rejects.toThrow(/503/);
  });
});
