// openapi.yaml's enums against the domain's own constants, in both directions: a value the contract
// declares that the code does not know, or one the code uses that the contract does not declare, fails
// here rather than in an integrator's generated client. The domain constants are the code's one list of
// each rule (the state table, the method table, the error table, the permission resources).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ERROR_STATUS } from '../../src/errors';
import { PERMISSION_RESOURCES } from '../../src/domain/accounts/permissions';
import { ACTIVE_METHOD_CODES, PAYMENT_METHODS } from '../../src/domain/payments/methods';
import { FAILURE_CODES, PAYMENT_EVENT_TYPES, PAYMENT_STATUSES, PAYMENT_TRANSITIONS } from '../../src/domain/payments/paymentStates';
import { ROOT } from '../support/processes';

type Obj = Record<string, any>;
const doc = parse(readFileSync(path.join(ROOT, 'openapi.yaml'), 'utf8')) as Obj;
const schemas = doc.components.schemas as Record<string, Obj>;
const enumOf = (name: string): string[] => {
  const values = schemas[name]?.enum as string[] | undefined;
  expect(values, `components.schemas.${name}.enum`).toBeDefined();
  return values!;
};
const sorted = (values: Iterable<string>) => [...values].sort();

describe('openapi.yaml enums = the domain constants', () => {
  it('PaymentIntentStatus is the state table\'s PAYMENT_STATUSES', () => {
    expect(sorted(enumOf('PaymentIntentStatus'))).toEqual(sorted(PAYMENT_STATUSES));
  });

  it('every state the transition table moves between is a PaymentIntentStatus', () => {
    const declared = new Set(enumOf('PaymentIntentStatus'));
    for (const [trigger, rule] of Object.entries(PAYMENT_TRANSITIONS)) {
      const to = typeof rule.to === 'string' ? [rule.to] : [rule.to.partial, rule.to.whole];
      for (const s of [...rule.from, ...to]) expect(declared.has(s), `${trigger}: ${s}`).toBe(true);
    }
  });

  it('FailureCode is FAILURE_CODES', () => {
    expect(sorted(enumOf('FailureCode'))).toEqual(sorted(FAILURE_CODES));
  });

  it('EventType is PAYMENT_EVENT_TYPES plus exactly the types whose data is not a payment\'s (session, ping)', () => {
    const types = enumOf('EventType');
    const mapping = schemas.Event!.discriminator.mapping as Record<string, string>;
    const dataOf = (type: string) => {
      const ref = mapping[type]!.slice(2).split('/');
      const branch = ref.reduce<any>((acc, k) => acc?.[k], doc);
      return branch.properties.data.$ref as string;
    };
    const paymentData = new Set(['#/components/schemas/PaymentIntent', '#/components/schemas/Refund']);
    expect(sorted(types.filter((t) => paymentData.has(dataOf(t))))).toEqual(sorted(PAYMENT_EVENT_TYPES));
    // And the other way: every payment event type is declared.
    for (const t of PAYMENT_EVENT_TYPES) expect(types, t).toContain(t);
    // Every event the state table emits is one of them.
    for (const rule of Object.values(PAYMENT_TRANSITIONS)) for (const e of rule.events) expect(PAYMENT_EVENT_TYPES).toContain(e);
  });

  it('MethodCode is ACTIVE_METHOD_CODES, RequestedMethodCode every code of the method table', () => {
    expect(sorted(enumOf('MethodCode'))).toEqual(sorted(ACTIVE_METHOD_CODES));
    expect(sorted(enumOf('RequestedMethodCode'))).toEqual(sorted(PAYMENT_METHODS.map((m) => m.code)));
    expect(sorted(schemas.PaymentMethod!.properties.status.enum)).toEqual(sorted(new Set(PAYMENT_METHODS.map((m) => m.status))));
  });

  it('ErrorCode is the error table of src/errors.ts (ERROR_STATUS)', () => {
    expect(sorted(enumOf('ErrorCode'))).toEqual(sorted(Object.keys(ERROR_STATUS)));
  });

  it('ApiKeyPermission is every PERMISSION_RESOURCES entry with :read and :write', () => {
    expect(sorted(enumOf('ApiKeyPermission'))).toEqual(sorted(PERMISSION_RESOURCES.flatMap((r) => [`${r}:read`, `${r}:write`])));
  });
});
