import { EXPRESS_SCENARIOS, REFERENCE_SCENARIO, type SandboxStep } from './generated/sandboxScenarios';

/** The final state each `pgw trigger` scenario brings its payment intent to. */
export interface Scenario {
  description: string;
  /** How the payment is made: an express payment from this mobile, a reference, or a checkout session. */
  pay: { express: string } | { reference: true } | { checkout: string };
  /** What happens after creation, before waiting for `finalStatus`. */
  then: 'rail' | 'pay_reference' | 'expire_reference' | 'refund_partial' | 'refund_full';
  finalStatus: string;
}

/** 72 h: an unpaid reference expires (openapi.yaml x-sandbox-scenarios, reference). */
export const REFERENCE_VALIDITY_SECONDS = REFERENCE_SCENARIO.expiresAfterSeconds;
/**
 * Clock advance that takes an express payment through its whole scenario: the slowest, 923000002,
 * succeeds by reconciliation 30 s after creation (openapi.yaml x-sandbox-scenarios); a refund takes 3 s.
 */
export const RAIL_ADVANCE_SECONDS = 60;
export const SCENARIO_AMOUNT = 10_000;

/** The sandbox mobile that succeeds: the payment of the refund and checkout scenarios. */
export const SUCCEEDING_MOBILE = EXPRESS_SCENARIOS.find((s) => s.name === 'succeeded')!.mobile;

/** `UNKNOWN, then SUCCEEDED by reconciliation`: the steps after PROCESSING, as the contract names them. */
function outcome(steps: readonly SandboxStep[]): string {
  return steps
    .filter((s) => s.status !== 'PROCESSING')
    .map((s, i, after) => `${s.status}${s.failureCode ? ` ${s.failureCode}` : ''}${after[i - 1]?.status === 'UNKNOWN' ? ' by reconciliation' : ''}`)
    .join(', then ');
}

/** One scenario per sandbox mobile of the contract (x-sandbox-scenarios), named `express.<name>`. */
const EXPRESS: Record<string, Scenario> = Object.fromEntries(
  EXPRESS_SCENARIOS.map((s) => [
    `express.${s.name}`,
    { description: `express payment from ${s.mobile}: ${outcome(s.steps)}`, pay: { express: s.mobile }, then: 'rail', finalStatus: s.steps.at(-1)!.status },
  ]),
);

export const SCENARIOS: Readonly<Record<string, Scenario>> = Object.freeze({
  ...EXPRESS,
  'reference.paid': { description: 'reference payment, paid with the simulate endpoint: SUCCEEDED', pay: { reference: true }, then: 'pay_reference', finalStatus: 'SUCCEEDED' },
  'reference.expired': { description: 'reference payment left unpaid 72 h (clock advanced): EXPIRED', pay: { reference: true }, then: 'expire_reference', finalStatus: 'EXPIRED' },
  'refund.partial': { description: 'express payment, then a refund of half: PARTIALLY_REFUNDED', pay: { express: SUCCEEDING_MOBILE }, then: 'refund_partial', finalStatus: 'PARTIALLY_REFUNDED' },
  'refund.full': { description: 'express payment, then a refund of all of it: REFUNDED', pay: { express: SUCCEEDING_MOBILE }, then: 'refund_full', finalStatus: 'REFUNDED' },
  'checkout.completed': { description: `checkout session paid by express from ${SUCCEEDING_MOBILE}: COMPLETED`, pay: { checkout: SUCCEEDING_MOBILE }, then: 'rail', finalStatus: 'SUCCEEDED' },
});
