import { EVENT_TYPES, type EventTypeName } from '../../../generated/eventTypes';

/**
 * The payment-intent state machine of the specification, as data. Every state change goes through
 * `planTransition`, and the caller writes it as a conditional update on the state it read, so a race
 * loses cleanly instead of writing twice. A trigger that is not in this table changes nothing and is
 * answered with 409 `payment_already_processed` (contract decisions).
 */
export const PAYMENT_STATUSES = [
  'PENDING',
  'PROCESSING',
  'UNKNOWN',
  'SUCCEEDED',
  'FAILED',
  'CANCELLED',
  'EXPIRED',
  'PARTIALLY_REFUNDED',
  'REFUNDED',
] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/** The event types that are about no payment: a checkout session's completion, a webhook endpoint's test. */
const ACCOUNT_EVENT_TYPES = ['checkout.session.completed', 'test.ping'] as const;
export type PaymentEventType = Exclude<EventTypeName, (typeof ACCOUNT_EVENT_TYPES)[number]>;

/** The events of a payment's life: the contract's event types (openapi.yaml EventType, generated), less the account events. */
export const PAYMENT_EVENT_TYPES: readonly PaymentEventType[] = EVENT_TYPES.filter(
  (t): t is PaymentEventType => !(ACCOUNT_EVENT_TYPES as readonly string[]).includes(t),
);

/** Why a FAILED payment failed (`failure_code`). */
export const FAILURE_CODES = ['rejected_by_customer', 'insufficient_funds', 'provider_unavailable'] as const;
export type FailureCode = (typeof FAILURE_CODES)[number];

export type PaymentTrigger =
  | 'rail_start' // PENDING -> PROCESSING (express), no event
  | 'rail_confirm' // PROCESSING -> SUCCEEDED
  | 'rail_reject' // PROCESSING -> FAILED
  | 'rail_unavailable' // PENDING -> FAILED provider_unavailable
  | 'rail_timeout' // PROCESSING -> UNKNOWN
  | 'reconcile' // UNKNOWN -> SUCCEEDED (+ reconciled)
  | 'cancel' // PENDING|PROCESSING -> CANCELLED
  | 'reference_paid' // PENDING -> SUCCEEDED (reference method)
  | 'reference_expire' // PENDING -> EXPIRED (reference method)
  | 'refund_complete'; // SUCCEEDED|PARTIALLY_REFUNDED -> PARTIALLY_REFUNDED|REFUNDED

export type MethodKind = 'multicaixa_express' | 'multicaixa_reference';

interface TransitionRule {
  from: readonly PaymentStatus[];
  /** Method the trigger applies to; undefined = any. */
  method?: MethodKind;
  /** Target, or both possible targets when the condition (fully refunded or not) picks one. */
  to: PaymentStatus | { partial: PaymentStatus; whole: PaymentStatus };
  events: readonly PaymentEventType[];
}

export const PAYMENT_TRANSITIONS: Readonly<Record<PaymentTrigger, TransitionRule>> = Object.freeze({
  rail_start: { from: ['PENDING'], method: 'multicaixa_express', to: 'PROCESSING', events: [] },
  rail_confirm: { from: ['PROCESSING'], method: 'multicaixa_express', to: 'SUCCEEDED', events: ['payment.succeeded'] },
  rail_reject: { from: ['PROCESSING'], method: 'multicaixa_express', to: 'FAILED', events: ['payment.failed'] },
  rail_unavailable: { from: ['PENDING'], method: 'multicaixa_express', to: 'FAILED', events: ['payment.failed'] },
  rail_timeout: { from: ['PROCESSING'], method: 'multicaixa_express', to: 'UNKNOWN', events: ['payment.unknown'] },
  reconcile: {
    from: ['UNKNOWN'],
    method: 'multicaixa_express',
    to: 'SUCCEEDED',
    events: ['payment.succeeded', 'payment.reconciled'],
  },
  cancel: { from: ['PENDING', 'PROCESSING'], to: 'CANCELLED', events: ['payment.cancelled'] },
  reference_paid: {
    from: ['PENDING'],
    method: 'multicaixa_reference',
    to: 'SUCCEEDED',
    events: ['reference.paid', 'payment.succeeded'],
  },
  reference_expire: { from: ['PENDING'], method: 'multicaixa_reference', to: 'EXPIRED', events: ['payment.expired'] },
  refund_complete: {
    from: ['SUCCEEDED', 'PARTIALLY_REFUNDED'],
    to: { partial: 'PARTIALLY_REFUNDED', whole: 'REFUNDED' },
    events: ['refund.succeeded'],
  },
});

export interface TransitionInput {
  status: PaymentStatus;
  method: MethodKind;
  /** For refund_complete: true when the refunded total reaches the payment amount. */
  wholeAmountRefunded?: boolean;
}

export type TransitionPlan =
  | { allowed: true; to: PaymentStatus; events: readonly PaymentEventType[] }
  | { allowed: false; reason: string };

export function planTransition(trigger: PaymentTrigger, input: TransitionInput): TransitionPlan {
  const rule = PAYMENT_TRANSITIONS[trigger];
  if (rule.method && rule.method !== input.method) {
    return { allowed: false, reason: `'${trigger}' does not apply to ${input.method} payments` };
  }
  if (!rule.from.includes(input.status)) {
    return { allowed: false, reason: `payment is ${input.status}` };
  }
  const to = typeof rule.to === 'string' ? rule.to : input.wholeAmountRefunded ? rule.to.whole : rule.to.partial;
  return { allowed: true, to, events: rule.events };
}

/** Paid states (spec general rule 3). */
export const PAID_STATUSES: readonly PaymentStatus[] = ['SUCCEEDED', 'PARTIALLY_REFUNDED', 'REFUNDED'];

/** A refund can be requested only in these states (spec, POST /refunds). */
export const REFUNDABLE_STATUSES: readonly PaymentStatus[] = ['SUCCEEDED', 'PARTIALLY_REFUNDED'];

/**
 * States after which nothing but refunds can happen. The one list of them: SSE streams, client-token
 * subscriptions and the payment pages (pay.js gets it from the page's data) close on them.
 */
export const FINAL_STATUSES: readonly PaymentStatus[] = ['SUCCEEDED', 'FAILED', 'CANCELLED', 'EXPIRED', 'PARTIALLY_REFUNDED', 'REFUNDED'];

export function isFinalStatus(status: string): boolean {
  return (FINAL_STATUSES as readonly string[]).includes(status);
}

/**
 * States a transition enters without an event (`events: []`: PROCESSING, when the rail starts). The event
 * bus carries such changes to live subscribers as internal status changes, not events.
 */
export const STATUSES_ENTERED_WITHOUT_EVENT: readonly PaymentStatus[] = [
  ...new Set(
    Object.values(PAYMENT_TRANSITIONS)
      .filter((rule) => rule.events.length === 0)
      .flatMap((rule): PaymentStatus[] => (typeof rule.to === 'string' ? [rule.to] : [rule.to.partial, rule.to.whole])),
  ),
];

export function isPaymentStatus(value: string): value is PaymentStatus {
  return (PAYMENT_STATUSES as readonly string[]).includes(value);
}
