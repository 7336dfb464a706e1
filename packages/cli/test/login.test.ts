import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../../../test/support/accounts';
import { type TestServer } from '../../../test/support/server';
import { runPgw, tempConfigHome } from './support/pgw';
import { sharedGateway } from '../../../test/support/server';

let server: TestServer;
let account: TestAccount;
let config: ReturnType<typeof tempConfigHome>;

beforeAll(async () => {
  server = await sharedGateway();
  account = await createAccount(server.baseUrl);
});
afterAll(() => server.stop());
afterEach(() => config?.cleanup());

describe('pgw login', () => {
  it('checks the key, saves it 0600 in a 0700 dir under XDG_CONFIG_HOME, and never prints it', async () => {
    config = tempConfigHome();
    const res = await runPgw(['login', '--api-key', account.sk, '--base-url', server.baseUrl], config.env);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(account.id);
    expect(res.stdout + res.stderr).not.toContain(account.sk);
    expect(res.stdout + res.stderr).not.toContain(account.sk.slice(8, 20));

    const dir = path.join(config.home, 'pgw');
    const file = path.join(dir, 'config.json');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(readFileSync(file, 'utf8'));
    expect(saved.default_base_url).toBe(server.baseUrl);
    expect(saved.logins[server.baseUrl].api_key).toBe(account.sk);

    // The saved key and server are used with no flag: the clock of this account moves.
    const clock = await runPgw(['clock', 'advance', '90s', '--json'], config.env);
    expect(clock.code).toBe(0);
    expect(JSON.parse(clock.stdout)).toMatchObject({ object: 'sandbox_clock', offset_seconds: 90 });
  });

  it('refuses a bad key with exit 1 and authentication_failed, and saves nothing', async () => {
    config = tempConfigHome();
    const res = await runPgw(['login', '--api-key', 'sk_test_not_a_real_key_000000', '--base-url', server.baseUrl], config.env);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: authentication_failed: /m);
    expect(() => statSync(path.join(config.home, 'pgw', 'config.json'))).toThrow();
  });

  it('is a usage error (exit 2) without a key when standard input is not a terminal', async () => {
    config = tempConfigHome();
    const res = await runPgw(['login', '--base-url', server.baseUrl], config.env);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--api-key');
  });
});

describe('usage errors exit 2', () => {
  it.each([
    [['no-such-command']],
    [['listen']], // --forward-to is required
    [['listen', '--forward-to', 'not a url']],
    [['listen', '--forward-to', 'http://127.0.0.1:1/hook', '--events', 'payment.nope']],
    [['trigger', 'express.nope']],
    [['clock', 'advance', '10y']],
    [['clock', 'advance', '0s']],
    [['trigger', 'express.succeeded', '--base-url', 'ftp://example.com']],
  ])('pgw %j', async (args) => {
    config = tempConfigHome();
    const res = await runPgw([...args, '--api-key', account.sk], config.env);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/error/);
  });

  it('a command with no key anywhere', async () => {
    config = tempConfigHome();
    const res = await runPgw(['trigger', 'express.succeeded', '--base-url', server.baseUrl], config.env);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('pgw login');
  });

  it('--help exits 0', async () => {
    config = tempConfigHome();
    const res = await runPgw(['--help'], config.env);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('listen');
  });
});
