import { gql } from 'urql';

/** What the payments table shows of an intent (also read from events and subscription messages). */
export interface PaymentRow {
  id: string;
  amount: number;
  currency: string;
  paymentMethod: string;
  status: string;
  failureCode: string | null;
  createdAt: string;
  updatedAt: string;
  customer: { mobile: string } | null;
  reference: { entity: string; number: string; expiresAt: string } | null;
}

export const PAYMENT_ROW = gql`
  fragment PaymentRow on PaymentIntent {
    id
    amount
    currency
    paymentMethod
    status
    failureCode
    createdAt
    updatedAt
    customer {
      mobile
    }
    reference {
      entity
      number
      expiresAt
    }
  }
`;

/** The status filter's choices: the state table's statuses (pure data, bundled into the app as they are). */
export { PAYMENT_STATUSES } from '../../domain/payments/payment.states';

/** The later of two versions of the same intent: messages can arrive out of order from two sources. */
export function newer(a: PaymentRow | undefined, b: PaymentRow): PaymentRow {
  return !a || b.updatedAt >= a.updatedAt ? b : a;
}

/** Newest first, as GET /payment_intents lists them. */
export function byNewest(a: PaymentRow, b: PaymentRow): number {
  return a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1;
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
