import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { ApiKeyRecord } from '../../src/domain/accounts/apiKeyModel';
import { authorize } from '../../src/operations/authorize';
import { keyCaller, PUBLIC_CALLER } from '../../src/operations/caller';
import { getOperation, operations, parameterSchema, type OperationId } from '../../src/operations/contract';
import { isExecutable, successStatus } from '../../src/operations/execute';
import { DEFAULTED_QUERY_PARAMETERS, type OperationInput, type Schema, type SuccessBody } from '../../src/operations/types';
import { streamRoutes } from '../../src/rest/streams';
import { ROOT } from '../../src/paths';

/**
 * The operations layer reads openapi.yaml's table (generated/operations.ts) and nothing else: these hold
 * the few facts it relies on to the contract.
 */
const apiOperations = Object.values(operations).filter((op) => op.basePath === '/v1');

const key = (type: ApiKeyRecord['type'], permissions: string[] = []) =>
  keyCaller({ _id: 'key_test', account_id: 'acct_test', type, permissions } as unknown as ApiKeyRecord);

describe('the operations layer and the contract', () => {
  it('runs every /v1 operation: a handler in src/operations/handlers, or one of REST\'s event streams', () => {
    for (const op of apiOperations) {
      const id = op.operationId as OperationId;
      expect(isExecutable(id) || id in streamRoutes, id).toBe(true);
    }
  });

  it('gives each operation the one 2xx status openapi.yaml declares', () => {
    for (const op of apiOperations) {
      const declared = Object.keys(op.responseContentTypes).filter((s) => s.startsWith('2'));
      expect(declared, op.operationId).toHaveLength(1);
      expect(successStatus(op.operationId as OperationId)).toBe(Number(declared[0]));
    }
  });

  it('checks permission against x-permission: the secret key passes, a restricted key without it gets 403, nobody gets 401', () => {
    for (const op of apiOperations) {
      const id = op.operationId as OperationId;
      if (op.permission === null) {
        expect(() => authorize(PUBLIC_CALLER, id), id).not.toThrow();
        continue;
      }
      expect(() => authorize(key('secret'), id), id).not.toThrow();
      expect(() => authorize(PUBLIC_CALLER, id), id).toThrow(expect.objectContaining({ code: 'authentication_failed' }));
      const refusal = op.permission === 'any_key' ? null : expect.objectContaining({ code: 'permission_denied' });
      if (refusal) expect(() => authorize(key('restricted'), id), id).toThrow(refusal);
      if (op.permission !== 'any_key' && op.permission !== 'secret_key') {
        expect(() => authorize(key('restricted', [op.permission]), id), id).not.toThrow();
      }
    }
    expect(() => authorize(key('restricted'), 'createPaymentIntent')).toThrow('This API key is not allowed to call POST /payment_intents');
  });

  it("finds a default in openapi.yaml for every query parameter the handlers' types take as defaulted", () => {
    let checked = 0;
    for (const op of apiOperations) {
      for (const name of DEFAULTED_QUERY_PARAMETERS) {
        let schema: Record<string, unknown>;
        try {
          schema = parameterSchema(op.operationId as OperationId, 'query', name);
        } catch {
          continue; // the operation has no such parameter
        }
        checked++;
        expect(schema.default, `${op.operationId} ?${name}`).toBeDefined();
      }
    }
    expect(checked).toBeGreaterThan(0);
  });

  it('idempotent operations need a key (the idempotency scope is an account)', () => {
    for (const op of apiOperations.filter((o) => o.idempotent)) expect(getOperation(op.operationId as OperationId).permission).not.toBeNull();
  });

  it('src/graphql imports nothing from src/rest, and src/rest nothing from src/graphql', () => {
    const importsOf = (dir: string) =>
      readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.ts'))
        .flatMap((f) => [...readFileSync(path.join(ROOT, dir, f), 'utf8').matchAll(/from '([^']+)'/g)].map((m) => ({ file: `${dir}/${f}`, target: path.join(dir, path.dirname(f), m[1]!) })));
    expect(importsOf('src/graphql').filter((i) => i.target.startsWith('src/rest/'))).toEqual([]);
    expect(importsOf('src/rest').filter((i) => i.target.startsWith('src/graphql/'))).toEqual([]);
  });

  it('types handler input and answers from generated/openapi.ts (checked by the compiler: npm run typecheck)', () => {
    expectTypeOf<SuccessBody<'getPaymentIntent'>>().toEqualTypeOf<Schema<'PaymentIntent'>>();
    expectTypeOf<SuccessBody<'createRefund'>>().toEqualTypeOf<Schema<'Refund'>>();
    expectTypeOf<SuccessBody<'getPaymentLinkQr'>>().toEqualTypeOf<string>();
    expectTypeOf<OperationInput<'createPaymentIntent'>['body']>().toEqualTypeOf<Schema<'CreatePaymentIntentRequest'>>();
    expectTypeOf<OperationInput<'getRefund'>['params']['id']>().toBeString();
    expectTypeOf<OperationInput<'listPaymentIntents'>['query']['limit']>().toBeNumber();
  });
});
