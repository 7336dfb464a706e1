import type {
  FailureCode,
  PaymentIntentResolvers,
  PaymentIntentStatus,
  PaymentMethodCode,
  PaymentReferenceResolvers,
} from '../../../generated/graphql/resolvers-types';
import { requireOperation } from '../context';
import { toEnumName } from '../enums';
import { pageSize } from '../limits';
import { listConnection } from '../pagination';

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
  // Batched per request (loaders.ts): a page of intents reads all their refunds / events at once. The
  // answer is cut to `first`, whose bounds the cost limit counts on (listBounds.ts).
  refunds: async (p, { first }, ctx) => {
    requireOperation(ctx, 'getRefund');
    const n = pageSize('PaymentIntent.refunds', first);
    return (await ctx.loaders.refundsByPayment.load(p.id)).slice(0, n);
  },
  events: async (p, { first }, ctx) => {
    requireOperation(ctx, 'listEvents');
    const n = pageSize('PaymentIntent.events', first);
    return (await ctx.loaders.eventsByPayment.load(p.id)).slice(0, n);
  },
  webhookDeliveries: async (p, { first }, ctx) => {
    requireOperation(ctx, 'listWebhookDeliveries');
    const n = pageSize('PaymentIntent.webhookDeliveries', first);
    return (await ctx.loaders.deliveriesByPayment.load(p.id)).slice(0, n);
  },
  // The same lists as connections (Relay): the same batched reads, a page of them after `after`.
  refundsConnection: async (p, { first, after }, ctx) => {
    requireOperation(ctx, 'getRefund');
    return listConnection(await ctx.loaders.refundsByPayment.load(p.id), pageSize('PaymentIntent.refundsConnection', first), after, 'refund');
  },
  eventsConnection: async (p, { first, after }, ctx) => {
    requireOperation(ctx, 'listEvents');
    return listConnection(await ctx.loaders.eventsByPayment.load(p.id), pageSize('PaymentIntent.eventsConnection', first), after, 'event');
  },
  webhookDeliveriesConnection: async (p, { first, after }, ctx) => {
    requireOperation(ctx, 'listWebhookDeliveries');
    return listConnection(await ctx.loaders.deliveriesByPayment.load(p.id), pageSize('PaymentIntent.webhookDeliveriesConnection', first), after, 'webhook delivery');
  },
};

export const PaymentReference: PaymentReferenceResolvers = {
  expiresAt: (r) => r.expires_at,
};
