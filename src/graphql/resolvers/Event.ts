import type { EventResolvers } from '../../../generated/graphql/resolvers-types';
import type { CheckoutSessionModel, PaymentIntentModel, RefundModel } from '../models';
import { eventTypeFromRest } from '../enums';

/** `data` is the object as stored with the event; the typed views read it according to the type. */
const objectOf = (data: object): unknown => ('object' in data ? data.object : undefined);

export const Event: EventResolvers = {
  type: (e) => eventTypeFromRest(e.type),
  createdAt: (e) => e.created_at,
  paymentIntent: (e) => (objectOf(e.data) === 'payment_intent' ? (e.data as unknown as PaymentIntentModel) : null),
  refund: (e) => (objectOf(e.data) === 'refund' ? (e.data as unknown as RefundModel) : null),
  checkoutSession: (e) => (objectOf(e.data) === 'checkout_session' ? (e.data as unknown as CheckoutSessionModel) : null),
};
