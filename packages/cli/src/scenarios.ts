/** The final state each `pgw trigger` scenario brings its payment intent to. */
export interface Scenario {
  description: string;
  /** How the payment is made: an express payment from this mobile, a reference, or a checkout session. */
  pay: { express: string } | { reference: true } | { checkout: string };
  /** What happens after creation, before waiting for `finalStatus`. */
  then: 'rail' | 'pay_reference' | 'expire_reference' | 'refund_partial' | 'refund_full';
  finalStatus: string;
}

/** 72 h: an unpaid reference expires (spec, "States and transitions"). */
export const REFERENCE_VALIDITY_SECONDS = 72 * 3600;
/**
 * Clock advance that takes an express payment through its whole scenario: the slowest, 923000002,
 * succeeds by reconciliation 30 s after creation (src/domain/payments/rail.ts); a refund takes 3 s.
 */
export const RAIL_ADVANCE_SECONDS = 60;
export const SCENARIO_AMOUNT = 10_000;

/** The spec's sandbox mobiles ("Sandbox scenarios for express payments"). */
export const SCENARIOS: Readonly<Record<string, Scenario>> = Object.freeze({
  'express.succeeded': { description: 'express payment from 923000000: SUCCEEDED', pay: { express: '923000000' }, then: 'rail', finalStatus: 'SUCCEEDED' },
  'express.rejected': { description: 'express payment from 923000001: FAILED rejected_by_customer', pay: { express: '923000001' }, then: 'rail', finalStatus: 'FAILED' },
  'express.unknown': { description: 'express payment from 923000002: UNKNOWN, then SUCCEEDED by reconciliation', pay: { express: '923000002' }, then: 'rail', finalStatus: 'SUCCEEDED' },
  'express.insufficient_funds': { description: 'express payment from 923000003: FAILED insufficient_funds', pay: { express: '923000003' }, then: 'rail', finalStatus: 'FAILED' },
  'express.unavailable': { description: 'express payment from 923000004: FAILED provider_unavailable', pay: { express: '923000004' }, then: 'rail', finalStatus: 'FAILED' },
  'reference.paid': { description: 'reference payment, paid with the simulate endpoint: SUCCEEDED', pay: { reference: true }, then: 'pay_reference', finalStatus: 'SUCCEEDED' },
  'reference.expired': { description: 'reference payment left unpaid 72 h (clock advanced): EXPIRED', pay: { reference: true }, then: 'expire_reference', finalStatus: 'EXPIRED' },
  'refund.partial': { description: 'express payment, then a refund of half: PARTIALLY_REFUNDED', pay: { express: '923000000' }, then: 'refund_partial', finalStatus: 'PARTIALLY_REFUNDED' },
  'refund.full': { description: 'express payment, then a refund of all of it: REFUNDED', pay: { express: '923000000' }, then: 'refund_full', finalStatus: 'REFUNDED' },
  'checkout.completed': { description: 'checkout session paid by express from 923000000: COMPLETED', pay: { checkout: '923000000' }, then: 'rail', finalStatus: 'SUCCEEDED' },
});
