import { describe, expect, it } from 'vitest';
import { DEFAULT_RAIL_SCENARIO, railScenario } from '../../../src/domain/payments/rail';
import { planTransition, type PaymentStatus } from '../../../src/domain/payments/paymentStates';
import { PAYMENT_METHODS, findMethod, methodAcceptsAmount } from '../../../src/domain/payments/methods';

/** Walks a scenario through the state table, as the rail timers do. */
function walk(mobile: string): Array<[number, PaymentStatus, string[]]> {
  let status: PaymentStatus = 'PENDING';
  const out: Array<[number, PaymentStatus, string[]]> = [];
  for (const step of railScenario(mobile)) {
    const plan = planTransition(step.trigger, { status, method: 'multicaixa_express' });
    if (!plan.allowed) throw new Error(`${mobile}: ${step.trigger} not allowed from ${status}`);
    status = plan.to;
    out.push([step.at, status, [...plan.events]]);
  }
  return out;
}

describe('sandbox rail scenarios', () => {
  it('follow the specification with the decided timings', () => {
    expect(walk('923000000')).toEqual([[2000, 'PROCESSING', []], [5000, 'SUCCEEDED', ['payment.succeeded']]]);
    expect(walk('923000001')).toEqual([[2000, 'PROCESSING', []], [5000, 'FAILED', ['payment.failed']]]);
    expect(walk('923000002')).toEqual([
      [2000, 'PROCESSING', []],
      [10000, 'UNKNOWN', ['payment.unknown']],
      [30000, 'SUCCEEDED', ['payment.succeeded', 'payment.reconciled']],
    ]);
    expect(walk('923000003')).toEqual([[2000, 'PROCESSING', []], [5000, 'FAILED', ['payment.failed']]]);
    expect(walk('923000004')).toEqual([[2000, 'FAILED', ['payment.failed']]]);
    expect(walk('912345678')).toEqual([[2000, 'PROCESSING', []], [5000, 'SUCCEEDED', ['payment.succeeded']]]);
  });

  it('carries the failure codes', () => {
    expect(railScenario('923000001').at(-1)?.failureCode).toBe('rejected_by_customer');
    expect(railScenario('923000003').at(-1)?.failureCode).toBe('insufficient_funds');
    expect(railScenario('923000004').at(-1)?.failureCode).toBe('provider_unavailable');
    expect(railScenario('999999999')).toBe(DEFAULT_RAIL_SCENARIO);
  });
});

describe('method table', () => {
  it('lists the active methods with their limits and the coming-soon ones without', () => {
    expect(PAYMENT_METHODS.map((m) => m.code)).toEqual([
      'multicaixa_express', 'multicaixa_reference', 'card', 'unitel_money', 'afrimoney', 'paypay_africa', 'kwik',
    ]);
    expect(findMethod('multicaixa_express')).toMatchObject({ status: 'active', min_amount: 100, max_amount: 5_000_000 });
    expect(findMethod('multicaixa_reference')).toMatchObject({ status: 'active', min_amount: 100, max_amount: 50_000_000 });
    for (const code of ['card', 'unitel_money', 'afrimoney', 'paypay_africa', 'kwik']) {
      expect(findMethod(code)).toEqual({
        code, display_name: expect.any(String), status: 'coming_soon', min_amount: null, max_amount: null,
        channels: { api: false, checkout: false, link: false },
      });
    }
  });

  it('checks amounts against the limits', () => {
    const express = findMethod('multicaixa_express')!;
    expect(methodAcceptsAmount(express, 100)).toBe(true);
    expect(methodAcceptsAmount(express, 99)).toBe(false);
    expect(methodAcceptsAmount(express, 5_000_001)).toBe(false);
    expect(methodAcceptsAmount(findMethod('card')!, 1000)).toBe(false);
  });
});
