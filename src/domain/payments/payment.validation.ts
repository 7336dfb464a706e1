import { ApiError } from '../../errors';
import { findMethod, type MethodChannel, type MethodCode } from './methods';

/**
 * Validation of a create request, in the service so that REST, GraphQL and the pages share it. REST
 * has already checked the shape against openapi.yaml; this repeats the checks that matter for other
 * callers and adds the ones a schema cannot express (method status and limits, mobile for express).
 */
export interface CreatePaymentIntentInput {
  amount: number;
  currency: string;
  payment_method: string;
  customer?: { mobile?: string } | null;
  merchant_reference?: string | null;
  metadata?: Record<string, string> | null;
}

export interface ValidCreateInput {
  amount: number;
  payment_method: MethodCode;
  customer: { mobile: string } | null;
  merchant_reference: string | null;
  metadata: Record<string, string>;
}

export const MOBILE_PATTERN = /^9\d{8}$/;
export const METADATA_MAX_KEYS = 50;
export const METADATA_MAX_KEY_LENGTH = 40;
export const METADATA_MAX_VALUE_LENGTH = 500;
export const MERCHANT_REFERENCE_MAX = 64;

export function validateCreateInput(input: CreatePaymentIntentInput, channel: MethodChannel): ValidCreateInput {
  if (typeof input !== 'object' || input === null) throw ApiError.invalid('The request body must be an object');
  if (typeof input.amount !== 'number' || !Number.isSafeInteger(input.amount)) {
    throw ApiError.invalid("Invalid field 'amount': must be an integer number of AOA");
  }
  if (input.currency !== 'AOA') throw ApiError.invalid("Invalid field 'currency': only 'AOA' is supported");

  const method = typeof input.payment_method === 'string' ? findMethod(input.payment_method) : undefined;
  if (!method) throw ApiError.invalid("Invalid field 'payment_method': unknown payment method");
  if (method.status !== 'active' || !method.channels[channel]) {
    throw new ApiError('method_disabled', `Payment method '${method.code}' is not available yet`);
  }

  let customer: { mobile: string } | null = null;
  if (input.customer !== undefined && input.customer !== null) {
    if (typeof input.customer !== 'object') throw ApiError.invalid("Invalid field 'customer': must be an object");
    const mobile = input.customer.mobile;
    if (mobile !== undefined) {
      if (typeof mobile !== 'string' || !MOBILE_PATTERN.test(mobile)) {
        throw new ApiError('invalid_phone_number', "Invalid field 'customer.mobile': must be 9 followed by 8 digits");
      }
      customer = { mobile };
    }
  }
  if (method.code === 'multicaixa_express' && !customer) {
    throw new ApiError('invalid_phone_number', "Missing field 'customer.mobile': required for multicaixa_express");
  }

  if (input.amount < (method.min_amount ?? 0) || input.amount > (method.max_amount ?? 0)) {
    throw new ApiError(
      'amount_out_of_range',
      `Invalid field 'amount': ${method.code} accepts ${method.min_amount} to ${method.max_amount} AOA`,
    );
  }

  let merchantReference: string | null = null;
  if (input.merchant_reference !== undefined && input.merchant_reference !== null) {
    if (typeof input.merchant_reference !== 'string' || input.merchant_reference.length > MERCHANT_REFERENCE_MAX) {
      throw ApiError.invalid(`Invalid field 'merchant_reference': a string of at most ${MERCHANT_REFERENCE_MAX} characters`);
    }
    merchantReference = input.merchant_reference;
  }

  return {
    amount: input.amount,
    payment_method: method.code as MethodCode,
    customer,
    merchant_reference: merchantReference,
    metadata: validateMetadata(input.metadata),
  };
}

/**
 * Keys the gateway itself sets on page payments: `payment_link` (a link's page) and `checkout_session`
 * (a checkout page). The public stream and the checkout completion trust them, so a merchant's own
 * payment may not carry them; the pages pass them through `via`, after this validation.
 */
export const RESERVED_METADATA_KEYS: readonly string[] = ['payment_link', 'checkout_session'];

/**
 * `$` and `.` are operators and path separators in database field names (`metadata.$where`,
 * `metadata.a.b`): keys that a query or an update on the stored intent could read as something else.
 */
const UNSAFE_KEY_CHARACTERS = /[$.]/;

export function validateMetadata(metadata: unknown): Record<string, string> {
  if (metadata === undefined || metadata === null) return {};
  if (typeof metadata !== 'object' || Array.isArray(metadata)) throw ApiError.invalid("Invalid field 'metadata': must be an object");
  const entries = Object.entries(metadata as Record<string, unknown>);
  if (entries.length > METADATA_MAX_KEYS) throw ApiError.invalid(`Invalid field 'metadata': at most ${METADATA_MAX_KEYS} keys`);
  const out: Record<string, string> = {};
  for (const [key, value] of entries) {
    if (key.length === 0 || key.length > METADATA_MAX_KEY_LENGTH) {
      throw ApiError.invalid(`Invalid field 'metadata': keys must be 1 to ${METADATA_MAX_KEY_LENGTH} characters`);
    }
    if (UNSAFE_KEY_CHARACTERS.test(key)) {
      throw ApiError.invalid(`Invalid field 'metadata': key '${key}' must not contain '$' or '.'`);
    }
    if (RESERVED_METADATA_KEYS.includes(key)) {
      throw ApiError.invalid(`Invalid field 'metadata': key '${key}' is reserved (the gateway sets it on payments made on its pages)`);
    }
    if (typeof value !== 'string' || value.length > METADATA_MAX_VALUE_LENGTH) {
      throw ApiError.invalid(`Invalid field 'metadata.${key}': must be a string of at most ${METADATA_MAX_VALUE_LENGTH} characters`);
    }
    out[key] = value;
  }
  return out;
}
