import type {
  CheckoutSessionConnectionResolvers,
  EventConnectionResolvers,
  PaymentIntentConnectionResolvers,
  RefundConnectionResolvers,
  WebhookDeliveryConnectionResolvers,
} from '../../../generated/graphql/resolvers-types';
import type { CheckoutSessionModel, EventModel, PaymentIntentModel, RefundModel, WebhookDeliveryModel } from '../models';
import { connectionFields } from '../pagination';

export const PaymentIntentConnection: PaymentIntentConnectionResolvers = connectionFields<PaymentIntentModel>();
export const EventConnection: EventConnectionResolvers = connectionFields<EventModel>();
export const RefundConnection: RefundConnectionResolvers = connectionFields<RefundModel>();
export const CheckoutSessionConnection: CheckoutSessionConnectionResolvers = connectionFields<CheckoutSessionModel>();
export const WebhookDeliveryConnection: WebhookDeliveryConnectionResolvers = connectionFields<WebhookDeliveryModel>();
