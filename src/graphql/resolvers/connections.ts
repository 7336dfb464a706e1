import type { EventConnectionResolvers, PaymentIntentConnectionResolvers } from '../../../generated/graphql/resolvers-types';
import type { EventModel, PaymentIntentModel } from '../models';
import { connectionFields } from '../pagination';

export const PaymentIntentConnection: PaymentIntentConnectionResolvers = connectionFields<PaymentIntentModel>();
export const EventConnection: EventConnectionResolvers = connectionFields<EventModel>();
