import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadContract } from '../faults/support/contract';
import { createAccount, type TestAccount } from '../support/accounts';
import { type TestServer } from '../support/server';
import { sharedGateway } from '../support/server';

/**
 * Integer query parameters accept plain decimal digits only (contract decisions): nothing that
 * Number() would also read (`1e2`, `0x10`, `+5`, `5.0`, ` 5`) is coerced into a value. Every integer
 * query parameter of openapi.yaml is covered, so one added later is held to the same rule.
 */
let server: TestServer;
let acct: TestAccount;
/** The path parameters of the operations that have some: objects made for them (fill in one added later). */
const pathParams: Record<string, Record<string, string>> = {};
beforeAll(async () => {
  server = await sharedGateway();
  acct = await createAccount(server.baseUrl);
  const pull = await acct.api.post('/webhook_endpoints', { mode: 'pull' });
  expect(pull.status, pull.text).toBe(201);
  pathParams.listPendingWebhookEvents = { id: pull.body.id };
});

/** The operation's path with its parameters filled in. */
function pathOf(op: { operationId: string; path: string; params: Array<{ name: string; in: string }> }): string {
  const missing = op.params.filter((p) => p.in === 'path' && !pathParams[op.operationId]?.[p.name]).map((p) => p.name);
  expect(missing, `add a fixture for ${op.operationId} (pathParams)`).toEqual([]);
  return op.path.replace(/\{(\w+)\}/g, (_m, name: string) => pathParams[op.operationId]![name]!);
}
afterAll(async () => server?.stop());

const integerQueryParams = loadContract().operations.flatMap((op) =>
  op.params.filter((p) => p.in === 'query' && p.schema.type === 'integer').map((p) => ({ op, name: p.name })),
);

/** As written in the URL (percent-encoded where the character needs it), with what the server decodes. */
const MALFORMED: Array<[string, string]> = [
  ['1e2', 'exponent'],
  ['1E1', 'upper-case exponent'],
  ['0x10', 'hexadecimal'],
  ['0b11', 'binary'],
  ['0o7', 'octal'],
  ['%2B5', '"+5"'],
  ['+5', '"+5" unencoded: a space then 5'],
  ['5.0', 'decimal point'],
  ['5.', 'trailing point'],
  ['%205', 'leading space'],
  ['5%20', 'trailing space'],
  ['%095', 'leading tab'],
  ['', 'empty'],
  ['1_0', 'numeric separator'],
  ['%EF%BC%95', 'full-width digit'],
  ['%D9%A5', 'Arabic-Indic digit'],
];

describe('integer query parameters', () => {
  it('the contract has some (this suite is not vacuous)', () => {
    expect(integerQueryParams.map(({ op, name }) => `${op.operationId}.${name}`)).toEqual(
      expect.arrayContaining(['listPaymentIntents.limit', 'listEvents.limit', 'listLogs.limit']),
    );
  });

  describe.each(integerQueryParams.map(({ op, name }) => [`${op.method} ${op.prefix}${op.path} ?${name}`, op, name] as const))('%s', (_label, op, name) => {
    it('refuses every spelling other than plain decimal digits with 400 invalid_request naming it', async () => {
      for (const [value, what] of MALFORMED) {
        const res = await acct.api.request(op.method, `${op.prefix}${pathOf(op)}?${name}=${value}`);
        expect(res.status, `${name}=${value} (${what}): ${res.text.slice(0, 200)}`).toBe(400);
        expect(res.body.error.code).toBe('invalid_request');
        expect(res.body.error.message).toContain(`'${name}'`);
      }
    });

    it('accepts plain digits, leading zeros included', async () => {
      for (const value of ['5', '05']) {
        const res = await acct.api.request(op.method, `${op.prefix}${pathOf(op)}?${name}=${value}`);
        expect(res.status, `${name}=${value}: ${res.text.slice(0, 200)}`).toBe(200);
      }
    });
  });
});
