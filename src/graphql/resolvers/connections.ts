import type {
  EventConnectionResolvers,
  PaymentIntentConnectionResolvers,
  RefundConnectionResolvers,
  WebhookDeliveryConnectionResolvers,
} from '../../../generated/graphql/resolvers-types';
import type { EventModel, PaymentIntentModel, RefundModel, WebhookDeliveryModel } from '../models';
import { connectionFields } from '../pagination';

export const PaymentIntentConnection: PaymentIntentConnectionResolvers = connectionFields<PaymentIntentModel>();
export const EventConnection: EventConnectionResolvers = connectionFields<EventModel>();
export const RefundConnection: RefundConnectionResolvers = connectionFields<RefundModel>();
export const WebhookDeliveryConnection: WebhookDeliveryConnectionResolvers = connectionFields<WebhookDeliveryModel>();
