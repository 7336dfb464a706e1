import { ApiError } from '../../errors';
import { findMethod, type MethodChannel, type MethodCode } from './methods';
import { METADATA_LIMITS } from '../../../generated/requestLimits';

/**
 * The business rules of a create request, in the service so that REST, GraphQL and the pages share them:
 * method status and limits, a mobile for express, reserved and unsafe metadata keys. Every caller comes
 * through src/operations, which has already held the body to openapi.yaml's schema (types, currency, the
 * mobile's pattern, the lengths and counts of merchant_reference and metadata), with the error codes the
 * contract gives: those rules live only there.
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

export function validateCreateInput(input: CreatePaymentIntentInput, channel: MethodChannel): ValidCreateInput {
  const method = typeof input.payment_method === 'string' ? findMethod(input.payment_method) : undefined;
  if (!method) throw ApiError.invalid("Invalid field 'payment_method': unknown payment method");
  if (method.status !== 'active' || !method.channels[channel]) {
    throw new ApiError('method_disabled', `Payment method '${method.code}' is not available yet`);
  }

  const mobile = input.customer?.mobile;
  const customer = mobile === undefined ? null : { mobile };
  if (method.code === 'multicaixa_express' && !customer) {
    throw new ApiError('invalid_phone_number', "Missing field 'customer.mobile': required for multicaixa_express");
  }

  if (input.amount < (method.min_amount ?? 0) || input.amount > (method.max_amount ?? 0)) {
    throw new ApiError(
      'amount_out_of_range',
      `Invalid field 'amount': ${method.code} accepts ${method.min_amount} to ${method.max_amount} AOA`,
    );
  }

  return {
    amount: input.amount,
    payment_method: method.code as MethodCode,
    customer,
    merchant_reference: input.merchant_reference ?? null,
    metadata: validateMetadata(input.metadata),
  };
}

/**
 * Keys the gateway itself sets on page payments: `payment_link` (a link's page) and `checkout_session`
 * (a checkout page); openapi.yaml lists them (Metadata, x-reserved-keys). The public stream and the
 * checkout completion trust them, so a merchant's own payment may not carry them; the pages pass them
 * through `via`, after this validation.
 */
export const RESERVED_METADATA_KEYS: readonly string[] = METADATA_LIMITS.reservedKeys;

/**
 * `$` and `.` are operators and path separators in database field names (`metadata.$where`,
 * `metadata.a.b`): keys that a query or an update on the stored intent could read as something else.
 */
const UNSAFE_KEY_CHARACTERS = /[$.]/;

export function validateMetadata(metadata: Record<string, string> | null | undefined): Record<string, string> {
  if (metadata === undefined || metadata === null) return {};
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(metadata)) {
    // openapi.yaml's Metadata sets no minimum key length: an empty key is refused here, with the message
    // it has always had (which names the schema's maximum).
    if (key.length === 0) {
      throw ApiError.invalid(`Invalid field 'metadata': keys must be 1 to ${METADATA_LIMITS.maxKeyLength} characters`);
    }
    if (UNSAFE_KEY_CHARACTERS.test(key)) {
      throw ApiError.invalid(`Invalid field 'metadata': key '${key}' must not contain '$' or '.'`);
    }
    if (RESERVED_METADATA_KEYS.includes(key)) {
      throw ApiError.invalid(`Invalid field 'metadata': key '${key}' is reserved (the gateway sets it on payments made on its pages)`);
    }
    out[key] = value;
  }
  return out;
}
