import { ApiError } from '../../errors';
import { ACTIVE_METHOD_CODES, findMethod, isActiveMethodCode, methodAcceptsAmount, type MethodCode } from '../payments/methods';

/**
 * The methods a payment link or checkout session offers. Omitted = every active method; each method
 * must accept the amount (contract decisions: otherwise 400 amount_out_of_range), because a page that
 * offers a method it cannot charge would only fail later, in front of the customer.
 */
export function resolveMethods(requested: readonly string[] | undefined, amount: number): MethodCode[] {
  const codes = requested === undefined ? [...ACTIVE_METHOD_CODES] : [...new Set(requested)];
  if (codes.length === 0) throw ApiError.invalid("Invalid field 'methods': must name at least one payment method");
  for (const code of codes) {
    const method = findMethod(code);
    if (!method) throw ApiError.invalid(`Invalid field 'methods': unknown payment method '${code}'`);
    if (!isActiveMethodCode(code)) {
      throw new ApiError('method_disabled', `Payment method '${code}' is not available yet (coming soon)`);
    }
    if (!methodAcceptsAmount(method, amount)) {
      throw new ApiError(
        'amount_out_of_range',
        `Amount ${amount} AOA is outside the limits of ${code} (${method.min_amount} to ${method.max_amount} AOA)`,
      );
    }
  }
  return codes as MethodCode[];
}
