import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { newId, randomBase62, type IdPrefix } from '../../src/ids';
import { loadContract, type OperationSpec } from '../faults/support/contract';
import { createAccount, type TestAccount } from '../support/accounts';
import { type TestServer } from '../support/server';
import { sharedGateway } from '../support/server';

/**
 * openapi.yaml gives every path parameter the pattern of the ids (and link codes) the gateway issues.
 * Every id the gateway generates matches its parameter's pattern, and a value that does not is answered
 * like an unknown id (404 `resource_not_found`, the specification's answer for an object that does not
 * exist), never 400: the pattern documents the id, it does not change the answer.
 */
const contract = loadContract();
const withPathParams = contract.operations.filter((op) => op.params.some((p) => p.in === 'path'));

/** What the gateway issues for each path parameter, by the prefix its pattern names. */
const ISSUED: Record<string, () => string> = {
  key: () => newId('key'),
  pay: () => newId('pay'),
  rf: () => newId('rf'),
  plink: () => newId('plink'),
  cs: () => newId('cs'),
  whe: () => newId('whe'),
  whd: () => newId('whd'),
  ctok: () => newId('ctok'),
  // Trusted GraphQL documents: `sha256:` and the hex digest of their text.
  sha256: () => `sha256:${createHash('sha256').update(randomBase62(16)).digest('hex')}`,
  // Payment-link codes (src/domain/links/paymentLinkService.ts).
  '': () => randomBase62(8),
};

function prefixOf(pattern: string): string {
  return /^\^([a-z0-9]+)[_:]/.exec(pattern)?.[1] ?? '';
}

describe('path parameter patterns', () => {
  it('every path parameter of every operation has one', () => {
    expect(withPathParams.length).toBeGreaterThan(10);
    for (const op of withPathParams) {
      for (const p of op.params.filter((x) => x.in === 'path')) {
        expect(typeof p.schema.pattern, `${op.operationId} {${p.name}}`).toBe('string');
      }
    }
  });

  it('accept every id the gateway generates, and the example, and nothing with another prefix', () => {
    const prefixes: IdPrefix[] = ['acct', 'pay', 'rf', 'plink', 'cs', 'whe', 'evt', 'qr', 'whd', 'key', 'req', 'ctok'];
    for (const op of withPathParams) {
      for (const p of op.params.filter((x) => x.in === 'path')) {
        const re = new RegExp(p.schema.pattern);
        const issue = ISSUED[prefixOf(p.schema.pattern)];
        expect(issue, `${op.operationId} {${p.name}}: ${p.schema.pattern}`).toBeDefined();
        for (let i = 0; i < 200; i++) {
          const id = issue!();
          expect(re.test(id), `${op.operationId} {${p.name}} refuses ${id}`).toBe(true);
        }
        expect(re.test(String(p.example)), `${op.operationId} {${p.name}} example`).toBe(true);
        for (const other of prefixes.filter((x) => x !== prefixOf(p.schema.pattern))) {
          expect(re.test(newId(other)), `${op.operationId} {${p.name}} accepts ${other}_`).toBe(false);
        }
      }
    }
  });
});

describe('a path id that does not match its pattern', () => {
  let server: TestServer;
  let acct: TestAccount;
  beforeAll(async () => {
    // About 200 requests with one key: more than the default 120 per minute.
    server = await sharedGateway({ RATE_LIMIT_PER_MINUTE: '100000' });
    acct = await createAccount(server.baseUrl);
  });
  afterAll(async () => server?.stop());

  /** Values that do not match the parameter's pattern, as written in the URL. */
  function malformed(pattern: string): Array<[string, string]> {
    const own = prefixOf(pattern);
    const head = own ? `${own}_` : '';
    const length = own ? 24 : 8;
    return [
      ['nope', 'no prefix'],
      [`${own === 'rf' ? 'pay' : 'rf'}_${'A'.repeat(24)}`, 'another prefix'],
      [`${head}${'A'.repeat(length - 1)}`, 'one character short'],
      [`${head}${'A'.repeat(length + 1)}`, 'one character long'],
      [`${head.toUpperCase()}${'A'.repeat(length - 1)}%2D`, 'a character outside base62'],
      [`${head.toUpperCase() || 'X_'}${'A'.repeat(length)}`, 'an upper-cased prefix'],
      ['%20', 'a space'],
    ];
  }

  function url(op: OperationSpec, name: string, value: string): string {
    const path = op.path.replace(/\{([^}]+)\}/g, (_, n: string) => (n === name ? value : encodeURIComponent(String(op.params.find((p) => p.name === n)?.example))));
    return `${op.prefix}${path}`;
  }

  it.each(withPathParams.map((op) => [`${op.method} ${op.prefix}${op.path}`, op] as const))('%s answers 404, as for an unknown id', async (_label, op) => {
    for (const p of op.params.filter((x) => x.in === 'path')) {
      const re = new RegExp(p.schema.pattern);
      for (const [value, what] of malformed(p.schema.pattern)) {
        expect(re.test(decodeURIComponent(value)), `${value} is malformed`).toBe(false);
        const res = await acct.api.request(op.method, url(op, p.name, value), { root: op.prefix === '', key: op.isPublic ? null : undefined });
        const where = `${op.operationId} {${p.name}} = ${what}: ${res.text.slice(0, 200)}`;
        expect(res.status, where).toBe(404);
        if (op.prefix === '/v1') expect(res.body.error.code, where).toBe('resource_not_found');
      }
    }
  });
});
