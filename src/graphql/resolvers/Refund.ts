import type { RefundResolvers, RefundStatus } from '../../../generated/graphql/resolvers-types';
import { requireOperation } from '../context';
import { toEnumName } from '../enums';

export const Refund: RefundResolvers = {
  paymentIntentId: (r) => r.payment_intent,
  paymentIntent: (r, _a, ctx) => {
    requireOperation(ctx, 'getPaymentIntent');
    return ctx.loaders.paymentIntent.load(r.payment_intent);
  },
  status: (r) => toEnumName<RefundStatus>(r.status),
  createdAt: (r) => r.created_at,
  updatedAt: (r) => r.updated_at,
};
