import { describe, expect, it } from 'vitest';
import {
  PAYMENT_STATUSES,
  PAYMENT_TRANSITIONS,
  planTransition,
  type MethodKind,
  type PaymentStatus,
  type PaymentTrigger,
} from '../../../src/domain/payments/paymentStates';

const EXPRESS: MethodKind = 'multicaixa_express';
const REFERENCE: MethodKind = 'multicaixa_reference';

/** The specification's transition table, row by row: [trigger, from, method, to, events]. */
const SPEC_ROWS: Array<[PaymentTrigger, PaymentStatus, MethodKind, PaymentStatus, string[], boolean?]> = [
  ['rail_start', 'PENDING', EXPRESS, 'PROCESSING', []],
  ['rail_confirm', 'PROCESSING', EXPRESS, 'SUCCEEDED', ['payment.succeeded']],
  ['rail_reject', 'PROCESSING', EXPRESS, 'FAILED', ['payment.failed']],
  ['rail_unavailable', 'PENDING', EXPRESS, 'FAILED', ['payment.failed']],
  ['rail_timeout', 'PROCESSING', EXPRESS, 'UNKNOWN', ['payment.unknown']],
  ['reconcile', 'UNKNOWN', EXPRESS, 'SUCCEEDED', ['payment.succeeded', 'payment.reconciled']],
  ['cancel', 'PENDING', EXPRESS, 'CANCELLED', ['payment.cancelled']],
  ['cancel', 'PROCESSING', EXPRESS, 'CANCELLED', ['payment.cancelled']],
  ['cancel', 'PENDING', REFERENCE, 'CANCELLED', ['payment.cancelled']],
  ['reference_paid', 'PENDING', REFERENCE, 'SUCCEEDED', ['reference.paid', 'payment.succeeded']],
  ['reference_expire', 'PENDING', REFERENCE, 'EXPIRED', ['payment.expired']],
  ['refund_complete', 'SUCCEEDED', EXPRESS, 'PARTIALLY_REFUNDED', ['refund.succeeded'], false],
  ['refund_complete', 'SUCCEEDED', EXPRESS, 'REFUNDED', ['refund.succeeded'], true],
  ['refund_complete', 'PARTIALLY_REFUNDED', REFERENCE, 'PARTIALLY_REFUNDED', ['refund.succeeded'], false],
  ['refund_complete', 'PARTIALLY_REFUNDED', REFERENCE, 'REFUNDED', ['refund.succeeded'], true],
];

describe('payment state table', () => {
  it.each(SPEC_ROWS)('%s from %s (%s) goes to %s', (trigger, from, method, to, events, whole) => {
    const plan = planTransition(trigger, { status: from, method, wholeAmountRefunded: whole });
    expect(plan).toEqual({ allowed: true, to, events });
  });

  it('rejects every (trigger, state) pair that the specification does not list', () => {
    const listed = new Set(SPEC_ROWS.map(([t, from, method]) => `${t}|${from}|${method}`));
    let rejected = 0;
    for (const trigger of Object.keys(PAYMENT_TRANSITIONS) as PaymentTrigger[]) {
      for (const status of PAYMENT_STATUSES) {
        for (const method of [EXPRESS, REFERENCE]) {
          const plan = planTransition(trigger, { status, method, wholeAmountRefunded: false });
          const inSpec =
            listed.has(`${trigger}|${status}|${method}`) ||
            // rows written for one method that the table allows for both (cancel, refunds)
            (trigger === 'cancel' && (status === 'PENDING' || status === 'PROCESSING')) ||
            (trigger === 'refund_complete' && (status === 'SUCCEEDED' || status === 'PARTIALLY_REFUNDED'));
          expect(plan.allowed, `${trigger} from ${status} (${method})`).toBe(inSpec);
          if (!plan.allowed) rejected++;
        }
      }
    }
    expect(rejected).toBeGreaterThan(100);
  });

  it('never leaves a final state except by refund', () => {
    for (const status of ['FAILED', 'CANCELLED', 'EXPIRED', 'REFUNDED'] as const) {
      for (const trigger of Object.keys(PAYMENT_TRANSITIONS) as PaymentTrigger[]) {
        for (const method of [EXPRESS, REFERENCE]) {
          expect(planTransition(trigger, { status, method }).allowed, `${trigger} from ${status}`).toBe(false);
        }
      }
    }
  });

  it('emits payment.succeeded only on the ways into SUCCEEDED, and reference.paid / reconciled in order', () => {
    const withSucceeded = (Object.entries(PAYMENT_TRANSITIONS) as Array<[PaymentTrigger, (typeof PAYMENT_TRANSITIONS)[PaymentTrigger]]>)
      .filter(([, rule]) => rule.events.includes('payment.succeeded'))
      .map(([t]) => t)
      .sort();
    expect(withSucceeded).toEqual(['rail_confirm', 'reconcile', 'reference_paid']);
    expect(PAYMENT_TRANSITIONS.reference_paid.events).toEqual(['reference.paid', 'payment.succeeded']);
    expect(PAYMENT_TRANSITIONS.reconcile.events).toEqual(['payment.succeeded', 'payment.reconciled']);
  });

  it('does not apply express rail triggers to reference payments or vice versa', () => {
    expect(planTransition('rail_start', { status: 'PENDING', method: REFERENCE }).allowed).toBe(false);
    expect(planTransition('reference_paid', { status: 'PENDING', method: EXPRESS }).allowed).toBe(false);
    expect(planTransition('reference_expire', { status: 'PENDING', method: EXPRESS }).allowed).toBe(false);
  });
});
