import type { Resolvers } from '../../../generated/graphql/resolvers-types';
import { withDeadlines } from '../executionLimits';
import { DateTimeScalar, JsonScalar, SafeIntScalar } from '../scalars';
import { Account } from './Account';
import { ApiKey } from './ApiKey';
import { CheckoutSession } from './CheckoutSession';
import { CheckoutSessionConnection, EventConnection, PaymentIntentConnection, RefundConnection, WebhookDeliveryConnection } from './connections';
import { Event } from './Event';
import { LogEntry } from './LogEntry';
import { Mutation } from './Mutation';
import { Node, NodeQuery } from './Node';
import { ClientTokenMutations } from './ClientTokenMutations';
import { PaymentIntent, PaymentReference } from './PaymentIntent';
import { PaymentIntentUpdate } from './PaymentIntentUpdate';
import { PaymentLink } from './PaymentLink';
import { PaymentMethod } from './PaymentMethod';
import { Query } from './Query';
import { QrCode } from './QrCode';
import { Refund } from './Refund';
import { SandboxAccount } from './SandboxAccount';
import { SandboxClock } from './SandboxClock';
import { SandboxReset } from './SandboxReset';
import { Subscription } from './Subscription';
import { GraphqlSettings, TrustedDocument, TrustedDocumentConnection, TrustedDocumentMutations, TrustedDocumentQuery } from './TrustedDocuments';
import { WebhookChaos, WebhookChaosReport } from './WebhookChaos';
import { WebhookDelivery } from './WebhookDelivery';
import { DeletedWebhookEndpoint, TestWebhookEvent, WebhookEndpoint } from './WebhookEndpoint';

/**
 * Fields not listed in a type's resolvers have the same name in the model (`id`, `amount`, `url` ...).
 * Each resolver first checks the execution deadline (executionLimits.ts).
 */
export const resolvers: Resolvers = withDeadlines<Resolvers>({
  DateTime: DateTimeScalar,
  JSON: JsonScalar,
  SafeInt: SafeIntScalar,
  Query: { ...Query, ...NodeQuery, ...TrustedDocumentQuery },
  Mutation: { ...Mutation, ...ClientTokenMutations, ...TrustedDocumentMutations },
  Node,
  Subscription,
  SandboxAccount,
  Account,
  ApiKey,
  PaymentMethod,
  PaymentIntent,
  PaymentReference,
  PaymentIntentConnection,
  Refund,
  PaymentLink,
  QrCode,
  CheckoutSession,
  WebhookEndpoint,
  DeletedWebhookEndpoint,
  TestWebhookEvent,
  WebhookDelivery,
  WebhookChaos,
  WebhookChaosReport,
  Event,
  EventConnection,
  RefundConnection,
  WebhookDeliveryConnection,
  CheckoutSessionConnection,
  LogEntry,
  SandboxClock,
  SandboxReset,
  PaymentIntentUpdate,
  TrustedDocument,
  TrustedDocumentConnection,
  GraphqlSettings,
});
