import type { PaymentIntentUpdateResolvers } from '../../../generated/graphql/resolvers-types';
import { eventTypeFromRest } from '../enums';

export const PaymentIntentUpdate: PaymentIntentUpdateResolvers = {
  eventType: (u) => (u.eventType ? eventTypeFromRest(u.eventType) : null),
};
