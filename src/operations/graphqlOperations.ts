import type { CheckoutSessionRecord } from '../domain/checkout/checkoutSessionModel';
import type { LogFilter } from '../domain/logs/logFacets';
import type { OverviewRange } from '../domain/overview/overviewService';
import type { PaymentSearch } from '../domain/payments/paymentSearch';
import type { OperationId } from './contract';
import type { ExecutableOperationId, KeyContext } from './types';

/**
 * Operations only GraphQL runs (dashboard reads openapi.yaml has no route for), on execute's path so that no
 * rule depends on the transport. Each borrows the permission of the REST operations whose data it reads, and
 * is counted as the one request its GraphQL request is. More: docs/decisions/notes/graphql.md, "GraphQL-only
 * operations".
 */
export const GRAPHQL_OPERATIONS = {
  /** The dashboard's payment search and filters, a page at a time with the REST list's cursor. */
  searchPaymentIntents: { permissionOf: ['listPaymentIntents'] },
  /** One webhook endpoint (REST only lists them). */
  getWebhookEndpoint: { permissionOf: ['listWebhookEndpoints'] },
  /** One event by id (GraphQL's `node`; REST lists events). */
  getEvent: { permissionOf: ['listEvents'] },
  /** One webhook delivery by id (GraphQL's `node`; REST lists them under their endpoint). */
  getWebhookDelivery: { permissionOf: ['listWebhookDeliveries'] },
  /** The dashboard's filters of the caller's log (REST's GET /logs has none). */
  searchLogs: { permissionOf: ['listLogs'] },
  /** The dashboard's list of checkout sessions (REST has none). */
  listCheckoutSessions: { permissionOf: ['getCheckoutSession'] },
  /** The dashboard's overview of the payments and webhook deliveries it summarises. */
  getOverview: { permissionOf: ['listPaymentIntents', 'listWebhookEndpoints'] },
} as const satisfies Record<string, { permissionOf: readonly ExecutableOperationId[] }> & { [K in OperationId]?: never };

export type GraphQLOperationId = keyof typeof GRAPHQL_OPERATIONS;

/** What each one's handler is given: the resolver maps its arguments to it. */
export interface GraphQLOperationInputs {
  searchPaymentIntents: { search: PaymentSearch; limit: number; startingAfter?: string | null };
  getWebhookEndpoint: { id: string };
  getEvent: { id: string };
  getWebhookDelivery: { id: string };
  getOverview: { range: OverviewRange };
  searchLogs: { limit: number; includeDashboard: boolean; filter: LogFilter };
  listCheckoutSessions: { limit: number; status: CheckoutSessionRecord['status'] | null; startingAfter?: string | null };
}

/** A handler gets the key's context, as a contract operation's (no idempotency, nothing prefetched). */
export type GraphQLHandlerTable<K extends GraphQLOperationId> = {
  [Op in K]: (ctx: KeyContext<never>, input: GraphQLOperationInputs[Op]) => Promise<unknown>;
};

export function isGraphQLOperation(id: string): id is GraphQLOperationId {
  return Object.hasOwn(GRAPHQL_OPERATIONS, id);
}
