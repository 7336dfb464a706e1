import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { printable, printableJson } from '../src/printable';
import { type TestServer } from '../../../test/support/server';
import { runPgw, tempConfigHome } from './support/pgw';
import { sharedGateway } from '../../../test/support/server';

/**
 * pgw shows what the gateway sends and never lets it drive the terminal (issue 54): control characters
 * in server-supplied strings are printed as visible escapes. Through the real CLI: an account named
 * with an OSC title sequence, a clear-screen sequence and a C1 CSI, then `pgw login` printing it.
 */
const TITLE = '\x1b]0;pwned\x07';
const CLEAR = '\x1b[2J';
const C1_CSI = '\u009b31m';
/** Any control character pgw must not write raw (C0 but the line breaks it adds itself, DEL, C1). */
// eslint-disable-next-line no-control-regex -- what the test looks for
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

describe('printable', () => {
  it('escapes C0, ESC, DEL and C1 visibly, and leaves other text alone', () => {
    expect(printable(TITLE)).toBe('\\x1b]0;pwned\\x07');
    expect(printable(CLEAR)).toBe('\\x1b[2J');
    expect(printable(`${C1_CSI}\x7f`)).toBe('\\x9b31m\\x7f');
    expect(printable('a\nb\tc\rd')).toBe('a\\nb\\tc\\rd');
    expect(printable('Loja Kianda — ação 7 500 AOA')).toBe('Loja Kianda — ação 7 500 AOA');
    expect(printable(42)).toBe('42');
    expect(printable(undefined)).toBe('');
  });

  it('--json keeps valid JSON of the same value with no raw control character', () => {
    const value = { name: `${TITLE}${CLEAR}${C1_CSI}\x7f` };
    const json = printableJson(value);
    expect(json).not.toMatch(RAW_CONTROL);
    expect(JSON.parse(json)).toEqual(value);
  });
});

describe('pgw prints server strings escaped', () => {
  let server: TestServer;
  let config: ReturnType<typeof tempConfigHome> | undefined;
  beforeAll(async () => {
    server = await sharedGateway();
  });
  afterAll(() => server?.stop());
  afterEach(() => config?.cleanup());

  it('pgw login shows an account name holding terminal escapes as text', async () => {
    const name = `Loja ${TITLE}${CLEAR}${C1_CSI}`;
    const created = await fetch(`${server.baseUrl}/v1/sandbox/accounts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
    expect(created.status).toBe(201);
    const account = (await created.json()) as { id: string; sk: string; name: string };
    // The gateway keeps the name as given: what pgw prints is pgw's to make safe.
    expect(account.name).toBe(name);

    config = tempConfigHome();
    const res = await runPgw(['login', '--api-key', account.sk, '--base-url', server.baseUrl], config.env);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(`account ${account.id} (Loja \\x1b]0;pwned\\x07\\x1b[2J\\x9b31m)`);
    expect(res.stdout + res.stderr).not.toMatch(RAW_CONTROL);
  });
});
