import { formatEnum } from './format';
import type { PaymentListRowFragment, PaymentMethodCode } from '../../../generated/dashboard/documents';

/** What the payments list shows of an intent (documents/payments.graphql, fragment PaymentListRow). */
export type PaymentRow = PaymentListRowFragment;

/** The status filter's choices: the state table's statuses (pure data, bundled into the app as they are). */
export { PAYMENT_STATUSES } from '../../domain/payments/payment.states';

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

/** Every scenario of the spec's "Sandbox scenarios": the express mobile numbers, and a reference payment. */
export const SCENARIOS: Array<{ value: string; label: string; method: 'MULTICAIXA_EXPRESS' | 'MULTICAIXA_REFERENCE'; mobile?: string }> = [
  { value: '923000000', label: 'Express 923000000: succeeds after ~5 s', method: 'MULTICAIXA_EXPRESS', mobile: '923000000' },
  { value: '923000001', label: 'Express 923000001: rejected by the customer', method: 'MULTICAIXA_EXPRESS', mobile: '923000001' },
  { value: '923000002', label: 'Express 923000002: unknown, reconciled after ~30 s', method: 'MULTICAIXA_EXPRESS', mobile: '923000002' },
  { value: '923000003', label: 'Express 923000003: insufficient funds', method: 'MULTICAIXA_EXPRESS', mobile: '923000003' },
  { value: '923000004', label: 'Express 923000004: provider unavailable', method: 'MULTICAIXA_EXPRESS', mobile: '923000004' },
  { value: '923456789', label: 'Express 923456789 (any other number): succeeds', method: 'MULTICAIXA_EXPRESS', mobile: '923456789' },
  { value: 'reference', label: 'Multicaixa Reference: pending until paid or expired (72 h)', method: 'MULTICAIXA_REFERENCE' },
];
