import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAccount } from '../../../test/support/accounts';
import { usePgwGateway } from './support/gateway';
import { runPgw } from './support/pgw';

const gw = usePgwGateway();
const flags = (sk: string) => ['--api-key', sk, '--base-url', gw.baseUrl];

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

describe('pgw trigger --amount --mobile --metadata', () => {
  it('makes the payment with the overrides and brings it to the scenario final state', async () => {
    const account = await createAccount(gw.baseUrl);
    const res = await runPgw(
      ['trigger', 'express.succeeded', '--amount', '2500', '--mobile', '923456789', '--metadata', 'order=42', '--metadata', 'note=a=b', '--json', ...flags(account.sk)],
      gw.config.env,
    );
    expect(res.code, res.stderr).toBe(0);
    const intent = JSON.parse(res.stdout);
    expect(intent).toMatchObject({ status: 'SUCCEEDED', amount: 2500, customer: { mobile: '923456789' }, metadata: { order: '42', note: 'a=b' } });

    const ref = await runPgw(['trigger', 'reference.paid', '--amount', '150000', '--metadata', 'order=43', '--json', ...flags(account.sk)], gw.config.env);
    expect(ref.code, ref.stderr).toBe(0);
    expect(JSON.parse(ref.stdout)).toMatchObject({ status: 'SUCCEEDED', amount: 150000, payment_method: 'multicaixa_reference', metadata: { order: '43' } });

    const refund = await runPgw(['trigger', 'refund.partial', '--amount', '3000', '--json', ...flags(account.sk)], gw.config.env);
    expect(JSON.parse(refund.stdout)).toMatchObject({ status: 'PARTIALLY_REFUNDED', amount: 3000, amount_refunded: 1500 });
  });

  it.each([
    [['express.succeeded', '--amount', '12.5'], '--amount must be a whole number'],
    [['express.succeeded', '--amount', '10,000'], '--amount must be a whole number'],
    [['express.succeeded', '--amount', '0'], '--amount must be a whole number'],
    [['express.succeeded', '--mobile', '12345'], '--mobile must be 9 followed by 8 digits'],
    [['reference.paid', '--mobile', '923000000'], 'reference.paid makes a reference payment'],
    [['express.succeeded', '--mobile', '923000001'], 'sandbox number of express.rejected'],
    [['express.rejected', '--mobile', '923456789'], 'cannot change it'],
    [['express.succeeded', '--metadata', 'order'], '--metadata must be key=value'],
    [['express.succeeded', '--metadata', 'a.b=1'], "must not contain '$' or '.'"],
    [['express.succeeded', '--metadata', 'k=1', '--metadata', 'k=2'], 'given twice'],
    [['express.succeeded', '--metadata', 'payment_link=x'], 'reserved'],
    [['checkout.completed', '--metadata', 'k=v'], 'takes no metadata'],
  ])('usage error, nothing created: pgw trigger %j', async (args, message) => {
    const account = await createAccount(gw.baseUrl);
    const res = await runPgw(['trigger', ...args, ...flags(account.sk)], gw.config.env);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(message);
    expect((await account.api.get('/payment_intents')).body.data).toEqual([]);
  });

  it('an amount the method refuses is the gateway error: exit 1 amount_out_of_range', async () => {
    const account = await createAccount(gw.baseUrl);
    const res = await runPgw(['trigger', 'express.succeeded', '--amount', '50', ...flags(account.sk)], gw.config.env);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: amount_out_of_range: /m);
  });
});

describe('pgw clock', () => {
  it('alone shows the clock (and `clock show` too); `clock advance` still moves it', async () => {
    const account = await createAccount(gw.baseUrl);
    const zero = await runPgw(['clock', ...flags(account.sk)], gw.config.env);
    expect(zero.code, zero.stderr).toBe(0);
    expect(zero.stdout).toMatch(/^sandbox clock: \S+ \(real time; offset 0 s\)\n$/);

    expect((await runPgw(['clock', 'advance', '1d2h3m4s', ...flags(account.sk)], gw.config.env)).code).toBe(0);
    const shown = await runPgw(['clock', 'show', ...flags(account.sk)], gw.config.env);
    expect(shown.stdout).toContain('1d 2h 3m 4s ahead of real time; offset 93784 s');
    const json = await runPgw(['clock', '--json', ...flags(account.sk)], gw.config.env);
    expect(JSON.parse(json.stdout)).toMatchObject({ object: 'sandbox_clock', offset_seconds: 93784 });
    expect((await account.api.get('/sandbox/clock')).body.offset_seconds).toBe(93784);
  });
});

describe('pgw tail', () => {
  it('is `events tail`', async () => {
    const account = await createAccount(gw.baseUrl);
    const p = gw.start(['tail', '--json', ...flags(account.sk)]);
    await p.errLine((l) => l.startsWith('tailing'));
    const intent = JSON.parse((await runPgw(['trigger', 'express.rejected', '--json', ...flags(account.sk)], gw.config.env)).stdout);
    const line = await p.line((l) => l.includes('payment.failed'));
    expect(JSON.parse(line)).toMatchObject({ type: 'payment.failed', data: { id: intent.id } });
    expect(await p.signal('SIGINT')).toBe(0);
  });
});

describe('pgw login', () => {
  it('refuses a publishable key, says why, and saves nothing', async () => {
    const account = await createAccount(gw.baseUrl);
    const res = await runPgw(['login', '--api-key', account.pk, '--base-url', gw.baseUrl], gw.config.env);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('publishable key');
    expect(res.stderr).toContain('secret key (sk_test_');
    expect(existsSync(path.join(gw.config.home, 'pgw', 'config.json'))).toBe(false);
  });
});

describe('a gateway that cannot be reached', () => {
  it.each([
    [['clock'], '/v1/sandbox/clock'],
    [['trigger', 'express.succeeded'], '/v1/payment_intents'],
    [['login'], '/v1/account'],
    [['listen', '--forward-to', 'http://127.0.0.1:9/hook'], '/v1/account'],
    [['tail'], '/v1/events'],
  ])('pgw %j names the URL it tried', async (args, route) => {
    const base = `http://127.0.0.1:${await closedPort()}`;
    const res = await runPgw([...args, '--api-key', 'sk_test_whatever_0000000000000000', '--base-url', base], gw.config.env);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: connection_error: /m);
    expect(res.stderr).toContain(`${base}${route}`);
    expect(res.stderr).toContain('ECONNREFUSED');
  });
});

describe('an account id that is not an acct_ id', () => {
  /** A server that lies: GET /v1/account answers `id`, everything else an empty list. */
  async function lyingServer(id: string) {
    const server = http.createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(req.url === '/v1/account' ? { object: 'account', id, name: 'x', livemode: false } : { object: 'list', data: [] }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(r)) };
  }

  it.each(['../../escape', '/tmp/escape', 'acct_../x', 'acct_'])('%j is refused before anything is written (listen, login)', async (id) => {
    const server = await lyingServer(id);
    // The config dir one level down in a fresh directory: anything written outside it would show up here.
    const root = mkdtempSync(path.join(os.tmpdir(), 'pgw-lying-'));
    const env = { ...gw.config.env, XDG_CONFIG_HOME: path.join(root, 'config') };
    try {
      const listen = await runPgw(['listen', '--forward-to', 'http://127.0.0.1:9/hook', '--api-key', 'sk_test_x', '--base-url', server.url], env);
      expect(listen.code).toBe(1);
      expect(listen.stderr).toMatch(/^error: invalid_response: .*not an acct_ id/m);
      const login = await runPgw(['login', '--api-key', 'sk_test_x', '--base-url', server.url], env);
      expect(login.code).toBe(1);
      expect(login.stderr).toContain('invalid_response');
      expect(readdirSync(root)).toEqual([]);
    } finally {
      rmSync(root, { recursive: true, force: true });
      await server.close();
    }
  });
});
