import type { CheckoutSessionResolvers, CheckoutSessionStatus, PaymentMethodCode } from '../../../generated/graphql/resolvers-types';
import { requireOperation } from '../context';
import { toEnumName } from '../enums';

export const CheckoutSession: CheckoutSessionResolvers = {
  methods: (s) => s.methods.map((m) => toEnumName<PaymentMethodCode>(m)),
  status: (s) => toEnumName<CheckoutSessionStatus>(s.status),
  paymentIntentId: (s) => s.payment_intent,
  paymentIntent: (s, _a, ctx) => {
    if (!s.payment_intent) return null;
    requireOperation(ctx, 'getPaymentIntent');
    return ctx.loaders.paymentIntent.load(s.payment_intent);
  },
  merchantReference: (s) => s.merchant_reference,
  successUrl: (s) => s.success_url,
  cancelUrl: (s) => s.cancel_url,
  expiresAt: (s) => s.expires_at,
  createdAt: (s) => s.created_at,
};
