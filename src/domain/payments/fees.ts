import type { MethodCode } from './methods';

/**
 * Service commission. Version 1: express 1.5 %, reference 2.0 % of the amount, rounded half up, at least
 * 1 AOA. The fee is computed once, when a payment first reaches SUCCEEDED, and frozen with its version
 * so that a later rule change never rewrites history.
 */
export const CURRENT_FEE_VERSION = 1;

/** Rates in tenths of a percent (per mille), so the arithmetic stays in integers. */
const RATE_PER_MILLE_V1: Record<MethodCode, number> = {
  multicaixa_express: 15,
  multicaixa_reference: 20,
};

export interface Fee {
  fee: number;
  fee_version: number;
}

export function computeFee(method: MethodCode, amount: number): Fee {
  if (!Number.isSafeInteger(amount) || amount < 0) throw new RangeError(`amount must be a non-negative integer, got ${amount}`);
  const perMille = RATE_PER_MILLE_V1[method];
  if (perMille === undefined) throw new RangeError(`no fee rule for method ${method}`);
  // amount * perMille / 1000, half up: add half the divisor before the integer division.
  const fee = Math.floor((amount * perMille + 500) / 1000);
  return { fee: Math.max(1, fee), fee_version: CURRENT_FEE_VERSION };
}
