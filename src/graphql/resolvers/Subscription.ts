import type { SubscriptionResolvers } from '../../../generated/graphql/resolvers-types';
import { tokenPaymentIntentUpdates } from '../clientTokenResolvers';
import { requireOperation } from '../context';
import { eventTypeToRest } from '../enums';
import type { EventModel, PaymentIntentUpdateModel } from '../models';
import { accountEvents } from '../subscriptions/accountEvents';
import { paymentIntentUpdates } from '../subscriptions/paymentIntentUpdates';

export const Subscription: SubscriptionResolvers = {
  paymentIntentUpdated: {
    subscribe: async (_p, { id }, ctx) => {
      if (ctx.clientToken) return tokenPaymentIntentUpdates(ctx, ctx.clientToken, id);
      requireOperation(ctx, 'streamPaymentIntentEvents');
      return paymentIntentUpdates(ctx, id);
    },
    resolve: (update: PaymentIntentUpdateModel) => update,
  },
  events: {
    subscribe: (_p, { types }, ctx) => {
      requireOperation(ctx, 'listEvents');
      return accountEvents(ctx, types ? types.map(eventTypeToRest) : null);
    },
    resolve: (event: EventModel) => event,
  },
};
