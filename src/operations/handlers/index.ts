import type { GraphQLHandlerTable, GraphQLOperationId } from '../graphqlOperations';
import type { ExecutableOperationId, HandlerTable } from '../types';
import { accountGraphQLHandlers, accountHandlers } from './accounts';
import { graphqlDocumentHandlers } from './graphqlDocuments';
import { linkGraphQLHandlers, linkHandlers } from './links';
import { paymentGraphQLHandlers, paymentHandlers } from './payments';
import { webhookGraphQLHandlers, webhookHandlers } from './webhooks';

/**
 * Every operation `execute` runs, keyed by operationId: the compiler holds this table to the contract
 * (a /v1 operation of openapi.yaml without a handler, or a handler's input read against the contract's
 * types wrongly, does not compile). The event streams are the protocol's (REST's SSE routes).
 */
export const handlers = {
  ...accountHandlers,
  ...paymentHandlers,
  ...linkHandlers,
  ...webhookHandlers,
  ...graphqlDocumentHandlers,
} satisfies HandlerTable<ExecutableOperationId>;

export type Handlers = typeof handlers;

/** The operations only GraphQL runs (graphqlOperations.ts), one handler each, held to that table too. */
export const graphqlHandlers = {
  ...accountGraphQLHandlers,
  ...paymentGraphQLHandlers,
  ...webhookGraphQLHandlers,
  ...linkGraphQLHandlers,
} satisfies GraphQLHandlerTable<GraphQLOperationId>;

export type GraphQLHandlers = typeof graphqlHandlers;
