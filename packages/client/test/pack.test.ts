import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useGateway } from './support';

const CLIENT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TSC = path.resolve(CLIENT_ROOT, '../../node_modules/typescript/bin/tsc');
const run = promisify(execFile);

/** What an integrator writes: typed against the installed package (its .d.ts), compiled with tsc, run by node. */
const SCRIPT = `
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, PgwError, constructEvent, type components } from '@pgw/client';
import { verifyWebhookSignature } from '@pgw/client/webhooks';

type Intent = components['schemas']['PaymentIntent'];
const baseUrl = process.env.PGW_BASE_URL!;
const { data: account } = await createClient({ baseUrl }).POST('/sandbox/accounts', { body: { name: 'packed client' } });
const pgw = createClient({ baseUrl, apiKey: account.sk });

// Create intents, then page through them with for await (2 a page).
const created: Intent[] = [];
for (let i = 0; i < 5; i++) {
  const { data } = await pgw.POST('/payment_intents', { body: { amount: 1000 + i, currency: 'AOA', payment_method: 'multicaixa_reference' } });
  created.push(data);
}
const paged: string[] = [];
for await (const intent of pgw.paginate('/payment_intents', { query: { limit: 2 } })) paged.push(intent.id);

// A coming_soon method does not compile; sent anyway, the gateway refuses it.
let refused = '';
try {
  // @ts-expect-error: card is not an active payment method
  await pgw.POST('/payment_intents', { body: { amount: 1000, currency: 'AOA', payment_method: 'card' } });
} catch (err) {
  if (!(err instanceof PgwError)) throw err;
  refused = err.code;
}

// A real webhook: an endpoint on this process, its test event verified with the endpoint's secret.
let resolveHook: (value: { body: string; signature: string }) => void = () => undefined;
const hook = new Promise<{ body: string; signature: string }>((resolve) => (resolveHook = resolve));
const server = http.createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8').on('data', (c: string) => (body += c));
  req.on('end', () => {
    res.end('ok');
    resolveHook({ body, signature: String(req.headers['service-signature']) });
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = \`http://127.0.0.1:\${(server.address() as AddressInfo).port}/hook\`;
const { data: endpoint } = await pgw.POST('/webhook_endpoints', { body: { url, events: ['payment.succeeded'] } });
await pgw.POST('/webhook_endpoints/{id}/test', { params: { path: { id: endpoint.id } } });
const delivery = await hook;
server.close();
const event = constructEvent(delivery.body, delivery.signature, endpoint.secret!);
const valid = verifyWebhookSignature(delivery.body, delivery.signature, endpoint.secret!);
let forged = '';
try {
  constructEvent(delivery.body, delivery.signature, 'whsec_not_the_secret');
} catch (err) {
  forged = (err as { reason?: string }).reason ?? 'thrown';
}

console.log(JSON.stringify({ created: created.map((c) => c.id), paged, refused, event: { id: event.id, type: event.type }, valid: Boolean(valid), forged }));
`;

describe('@pgw/client as an installed package', () => {
  const gw = useGateway();
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-client-pack-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    // The build output prepack made: not left behind for the repository's lint and typecheck.
    rmSync(path.join(CLIENT_ROOT, 'dist'), { recursive: true, force: true });
  });

  it('npm pack ships compiled JS and .d.ts; installed in an empty project, a typed script runs against the gateway', async () => {
    // prepack builds dist/ with tsc.
    const packed = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: CLIENT_ROOT, timeout: 240_000 });
    const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
    const files = info!.files.map((f) => f.path);
    expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/webhooks/index.js', 'dist/webhooks/index.d.ts', 'dist/client.js']));
    expect(files.filter((f) => f.startsWith('test/'))).toEqual([]);

    // An empty project outside the repository: the tarball, its dependencies from the npm cache or the
    // registry, and @types/node for node:http.
    const project = path.join(dir, 'project');
    mkdirSync(project);
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'pgw-client-consumer', private: true, type: 'module' }));
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', path.join(dir, info!.filename), '@types/node@20'], { cwd: project, timeout: 240_000 });
    const installed = JSON.parse(readFileSync(path.join(project, 'node_modules/@pgw/client/package.json'), 'utf8'));
    expect(installed.exports['.']).toEqual({ types: './dist/index.d.ts', default: './dist/index.js' });

    writeFileSync(path.join(project, 'main.ts'), SCRIPT);
    writeFileSync(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2023', 'DOM'], types: ['node'], strict: true, outDir: 'out' },
        files: ['main.ts'],
      }),
    );
    // Compiled against the package's declarations: a type error (or an unused @ts-expect-error) fails here.
    await run(process.execPath, [TSC, '-p', project], { cwd: project, timeout: 240_000 }).catch((err: { stdout?: string }) => {
      throw new Error(`tsc failed in the consumer project:\n${err.stdout}`);
    });
    const { stdout } = await run(process.execPath, [path.join(project, 'out/main.js')], { cwd: project, env: { ...process.env, PGW_BASE_URL: gw.server.baseUrl }, timeout: 60_000 });
    const result = JSON.parse(stdout);
    expect(result.paged).toEqual([...result.created].reverse());
    expect(result.refused).toBe('method_disabled');
    expect(result.event).toMatchObject({ type: 'test.ping', id: expect.stringMatching(/^evt_/) });
    expect(result.valid).toBe(true);
    expect(result.forged).toBe('signature_mismatch');
  }, 600_000); // a tsc build, an npm install and a tsc compile on a loaded 2-core machine
});
