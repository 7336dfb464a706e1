/**
 * The payment-method table: the single source of method codes, status, amount limits and channels.
 * GET /payment_methods serves it as is; payment, link, QR and checkout validation read limits from it.
 */
import type { components } from '../../../generated/openapi';

export type MethodStatus = 'active' | 'coming_soon';
export type MethodChannel = 'api' | 'checkout' | 'link';

/** The contract's PaymentMethod (openapi.yaml, generated/openapi.ts): the table is held to it. */
export type PaymentMethodInfo = components['schemas']['PaymentMethod'];

/** Codes accepted when creating a payment (`MethodCode` in the contract). */
export const ACTIVE_METHOD_CODES = ['multicaixa_express', 'multicaixa_reference'] as const;
export type MethodCode = (typeof ACTIVE_METHOD_CODES)[number];

const ALL_CHANNELS = { api: true, checkout: true, link: true } as const;
const NO_CHANNELS = { api: false, checkout: false, link: false } as const;

function comingSoon(code: PaymentMethodInfo['code'], display_name: string): PaymentMethodInfo {
  return { code, display_name, status: 'coming_soon', min_amount: null, max_amount: null, channels: { ...NO_CHANNELS } };
}

export const PAYMENT_METHODS: readonly PaymentMethodInfo[] = Object.freeze([
  {
    code: 'multicaixa_express',
    display_name: 'Multicaixa Express',
    status: 'active',
    min_amount: 100,
    max_amount: 5_000_000,
    channels: { ...ALL_CHANNELS },
  },
  {
    code: 'multicaixa_reference',
    display_name: 'Multicaixa Reference',
    status: 'active',
    min_amount: 100,
    max_amount: 50_000_000,
    channels: { ...ALL_CHANNELS },
  },
  comingSoon('card', 'Card'),
  comingSoon('unitel_money', 'Unitel Money'),
  comingSoon('afrimoney', 'Afrimoney'),
  comingSoon('paypay_africa', 'PayPay Africa'),
  comingSoon('kwik', 'Kwik'),
]);

export function findMethod(code: string): PaymentMethodInfo | undefined {
  return PAYMENT_METHODS.find((m) => m.code === code);
}

export function isActiveMethodCode(code: string): code is MethodCode {
  return (ACTIVE_METHOD_CODES as readonly string[]).includes(code);
}

/** True when `amount` is inside the method's limits (always false for methods without limits). */
export function methodAcceptsAmount(method: PaymentMethodInfo, amount: number): boolean {
  if (method.min_amount === null || method.max_amount === null) return false;
  return Number.isInteger(amount) && amount >= method.min_amount && amount <= method.max_amount;
}
