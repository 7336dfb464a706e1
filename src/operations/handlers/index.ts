import type { ExecutableOperationId, HandlerTable } from '../types';
import { accountHandlers } from './accounts';
import { linkHandlers } from './links';
import { paymentHandlers } from './payments';
import { webhookHandlers } from './webhooks';

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
} satisfies HandlerTable<ExecutableOperationId>;

export type Handlers = typeof handlers;
