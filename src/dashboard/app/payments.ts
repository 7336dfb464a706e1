import { formatEnum } from './format';
import type { PaymentListRowFragment, PaymentMethodCode } from '../../../generated/dashboard/documents';
import { EXPRESS_SCENARIOS, OTHER_EXPRESS_SCENARIO, REFERENCE_SCENARIO } from '../../../generated/sandboxScenarios';

/** What the payments list shows of an intent (documents/payments.graphql, fragment PaymentListRow). */
export type PaymentRow = PaymentListRowFragment;

/** The status filter's choices: the state table's statuses (pure data, bundled into the app as they are). */
export { PAYMENT_STATUSES } from '../../domain/payments/paymentStates';

/** The methods a payment can be made with in the sandbox (the filter's choices). */
export const ACTIVE_METHODS: PaymentMethodCode[] = ['MULTICAIXA_EXPRESS', 'MULTICAIXA_REFERENCE'];

/** The later of two versions of the same intent: messages can arrive out of order from two sources. */
export function newer<T extends { updatedAt: string }>(a: T | undefined, b: T): T {
  return !a || b.updatedAt >= a.updatedAt ? b : a;
}

/** Newest first, as GET /payment_intents lists them. */
export function byNewest(a: PaymentRow, b: PaymentRow): number {
  return a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1;
}

/** The active methods' short names; the others (coming soon) are spelled out from their codes. */
const METHOD_NAMES: Partial<Record<PaymentMethodCode, string>> = { MULTICAIXA_EXPRESS: 'Express', MULTICAIXA_REFERENCE: 'Reference' };

/** MULTICAIXA_EXPRESS → "Express": short enough for a phone's row; the detail page spells it out. */
export function methodName(method: PaymentMethodCode): string {
  return METHOD_NAMES[method] ?? formatEnum(method);
}

/**
 * Every scenario of the spec's "Sandbox scenarios" (openapi.yaml x-sandbox-scenarios, generated): the
 * express mobile numbers, one number that picks none (any other succeeds), and a reference payment.
 */
export const SCENARIOS: Array<{ value: string; label: string; method: 'MULTICAIXA_EXPRESS' | 'MULTICAIXA_REFERENCE'; mobile?: string }> = [
  ...EXPRESS_SCENARIOS.map((s) => ({ value: s.mobile, label: `Express ${s.mobile}: ${s.summary}`, method: 'MULTICAIXA_EXPRESS' as const, mobile: s.mobile })),
  {
    value: OTHER_EXPRESS_SCENARIO.exampleMobile,
    label: `Express ${OTHER_EXPRESS_SCENARIO.exampleMobile} (any other number): ${OTHER_EXPRESS_SCENARIO.summary}`,
    method: 'MULTICAIXA_EXPRESS',
    mobile: OTHER_EXPRESS_SCENARIO.exampleMobile,
  },
  { value: 'reference', label: `Multicaixa Reference: ${REFERENCE_SCENARIO.summary}`, method: 'MULTICAIXA_REFERENCE' },
];
