/**
 * The parent values GraphQL resolvers receive for each object type: the resources the domain services
 * already return (snake_case, exactly as REST serves them). codegen.ts maps the GraphQL types to these
 * (`mappers`), so every resolver is type-checked against what the service really gives it.
 */
import type { components } from '../../generated/openapi';
import type { AccountResource, SandboxAccountResource } from '../domain/accounts/accountService';
import type { ApiKeyResource } from '../domain/accounts/apiKeyService';
import type { CheckoutSessionResource } from '../domain/checkout/checkoutSessionSerializer';
import type { EventResource } from '../domain/events/eventSerializer';
import type { PaymentLinkResource } from '../domain/links/paymentLinkSerializer';
import type { LogEntryResource } from '../domain/logs/requestLogService';
import type { PaymentMethodInfo } from '../domain/payments/methods';
import type { PaymentIntentResource } from '../domain/payments/paymentSerializer';
import type { QrCodeResource } from '../domain/qr/qrService';
import type { RefundResource } from '../domain/refunds/refundSerializer';
import type { SandboxClockResource } from '../domain/sandbox/sandboxClockService';
import type { SandboxResetResource } from '../domain/sandbox/sandboxResetService';
import type { EndpointDelivery } from '../domain/webhooks/paymentDeliveries';
import type { WebhookEndpointResource } from '../domain/webhooks/webhookSerializer';
import type { WebhookChaosResource } from '../domain/webhooks/chaosService';
import type { ChaosReport } from '../domain/webhooks/chaos';

/** A new account with its keys, as `POST /sandbox/accounts` returns it (the only time `sk` and `pk` are shown). */
export type SandboxAccountModel = SandboxAccountResource;
export type AccountModel = AccountResource;
/** A key as listed; `secret` only right after creation. */
export type ApiKeyModel = ApiKeyResource & { secret?: string; last_used_at?: string | null };
export type PaymentMethodModel = PaymentMethodInfo;
export type PaymentIntentModel = PaymentIntentResource;
export type PaymentReferenceModel = NonNullable<PaymentIntentResource['reference']>;
export type RefundModel = RefundResource;
export type PaymentLinkModel = PaymentLinkResource;
export type QrCodeModel = QrCodeResource;
export type CheckoutSessionModel = CheckoutSessionResource;
/** An endpoint as listed; `secret` only in the creation and rotation responses. */
export type WebhookEndpointModel = WebhookEndpointResource;
/** A delivery with its endpoint's id (REST names it by the path). */
export type WebhookDeliveryModel = EndpointDelivery;
export interface DeletedWebhookEndpointModel {
  id: string;
  object: 'webhook_endpoint';
  deleted: true;
}
export interface TestWebhookEventModel {
  object: 'test_event';
  event_id: string;
  state: 'QUEUED';
}
/** An endpoint's chaos settings and report, as `/webhook_endpoints/{id}/chaos` answers them. */
export type WebhookChaosModel = WebhookChaosResource;
export type WebhookChaosReportModel = ChaosReport;
export type EventModel = EventResource;
export type LogEntryModel = LogEntryResource;
export type SandboxClockModel = SandboxClockResource;
export type SandboxResetModel = SandboxResetResource;

/** One page of a newest-first list, cut by `first` and `after` (see pagination.ts). */
export interface ConnectionModel<T> {
  items: T[];
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  cursorOf: (item: T) => string;
}
export type PaymentIntentConnectionModel = ConnectionModel<PaymentIntentResource>;
export type EventConnectionModel = ConnectionModel<EventResource>;
export type RefundConnectionModel = ConnectionModel<RefundResource>;
export type WebhookDeliveryConnectionModel = ConnectionModel<EndpointDelivery>;
export type CheckoutSessionConnectionModel = ConnectionModel<CheckoutSessionResource>;
export interface EdgeModel<T> {
  cursor: string;
  node: T;
}
export type PaymentIntentEdgeModel = EdgeModel<PaymentIntentResource>;
export type EventEdgeModel = EdgeModel<EventResource>;
export type RefundEdgeModel = EdgeModel<RefundResource>;
export type WebhookDeliveryEdgeModel = EdgeModel<EndpointDelivery>;
export type CheckoutSessionEdgeModel = EdgeModel<CheckoutSessionResource>;

/** A trusted document and the account's GraphQL settings, as REST answers them (/v1/graphql/...). */
export type TrustedDocumentModel = components['schemas']['GraphqlDocument'];
export type TrustedDocumentConnectionModel = ConnectionModel<TrustedDocumentModel>;
export type TrustedDocumentEdgeModel = EdgeModel<TrustedDocumentModel>;
export type GraphqlSettingsModel = components['schemas']['GraphqlSettings'];

/** One message of `paymentIntentUpdated`: the snapshot, or a change with its event (REST spellings). */
export interface PaymentIntentUpdateModel {
  snapshot: boolean;
  eventType: string | null;
  eventId: string | null;
  paymentIntent: PaymentIntentResource;
}
