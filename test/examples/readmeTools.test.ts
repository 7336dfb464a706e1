import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../packages/client/src/index';
import { useGateway } from '../../packages/client/test/support';
import { ROOT } from '../support/processes';
import { waitFor } from '../support/wait';
import { readmeBlock, runTsSnippet } from './readmeSnippets';

describe('README "Tools": the snippets run as written', () => {
  const gw = useGateway();

  it('@pgw/client: creates an account and an express payment, and catches a 404 as PgwError', async () => {
    const out = await runTsSnippet(readmeBlock('### @pgw/client (typed REST client)'), { PGW_BASE_URL: gw.server.baseUrl }, 'client');
    expect(out).toMatch(/^pay_[0-9A-Za-z]{24} PENDING$/m);
    expect(out).toMatch(/^404 resource_not_found req_[0-9A-Za-z]+$/m);
  });

  it('example merchant app: the commands of the block start the shop and an order gets fulfilled', async () => {
    const [gateway, merchantCmd, curl] = readmeBlock('### Example merchant app', 'sh').split('\n');
    // The gateway of this test runs with the env the first line sets.
    expect(gateway).toMatch(/^WEBHOOK_ALLOW_PRIVATE_NETWORKS=true npm start\b/);
    const file = /^npx tsx (\S+)/.exec(merchantCmd!)?.[1];
    expect(file).toBeDefined();
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'readme-merchant-'));
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, file!)], {
      cwd: ROOT,
      env: { ...process.env, PGW_BASE_URL: gw.server.baseUrl, MERCHANT_PORT: '0', MERCHANT_DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    try {
      await waitFor(async () => out, (o) => o.includes('webhook endpoint') || child.exitCode !== null, 60_000, 50);
      const merchantUrl = /merchant listening on (\S+)/.exec(out)?.[1];
      const apiKey = /PGW_API_KEY=(sk_test_\w+)/.exec(out)?.[1];
      expect(merchantUrl, out).toBeDefined();
      expect(apiKey, out).toBeDefined();

      // The curl line, sent to the port the shop took.
      const route = /localhost:4242(\/\S+)/.exec(curl!)?.[1];
      const body = /-d '([^']+)'/.exec(curl!)?.[1];
      const res = await fetch(`${merchantUrl}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(res.status).toBe(201);
      const { order } = (await res.json()) as { order: string };

      // "About 5 s later": the sandbox clock moves instead.
      await createClient({ baseUrl: gw.server.baseUrl, apiKey }).POST('/sandbox/clock/advance', { body: { seconds: 10 } });
      const fulfilled = await waitFor(
        () => fetch(`${merchantUrl}/orders/${order}`).then((r) => r.json() as Promise<{ status: string }>),
        (o) => o.status === 'fulfilled',
      );
      expect(fulfilled.status).toBe('fulfilled');
    } finally {
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
