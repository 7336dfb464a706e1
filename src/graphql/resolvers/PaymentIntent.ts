import type {
  FailureCode,
  PaymentIntentResolvers,
  PaymentIntentStatus,
  PaymentMethodCode,
  PaymentReferenceResolvers,
} from '../../../generated/graphql/resolvers-types';
import { requireOperation } from '../context';
import { toEnumName } from '../enums';

export const PaymentIntent: PaymentIntentResolvers = {
  paymentMethod: (p) => toEnumName<PaymentMethodCode>(p.payment_method),
  status: (p) => toEnumName<PaymentIntentStatus>(p.status),
  failureCode: (p) => (p.failure_code ? toEnumName<FailureCode>(p.failure_code) : null),
  merchantReference: (p) => p.merchant_reference,
  amountRefunded: (p) => p.amount_refunded,
  feeVersion: (p) => p.fee_version,
  apiKeyId: (p) => p.api_key_id,
  createdAt: (p) => p.created_at,
  updatedAt: (p) => p.updated_at,
  // Batched per request (loaders.ts): a page of intents reads all their refunds / events at once.
  refunds: (p, _a, ctx) => {
    requireOperation(ctx, 'getRefund');
    return ctx.loaders.refundsByPayment.load(p.id);
  },
  events: (p, _a, ctx) => {
    requireOperation(ctx, 'listEvents');
    return ctx.loaders.eventsByPayment.load(p.id);
  },
};

export const PaymentReference: PaymentReferenceResolvers = {
  expiresAt: (r) => r.expires_at,
};
