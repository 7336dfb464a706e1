import { createSandboxAccount, getAccount, toAccountResource } from '../../domain/accounts/accountService';
import { createRestrictedKey, listApiKeys, revokeApiKey, toApiKeyResource } from '../../domain/accounts/apiKeyService';
import { listRequestLogs, toLogEntryResource } from '../../domain/logs/requestLogService';
import { getOverview } from '../../domain/overview/overviewService';
import type { GraphQLHandlerTable } from '../graphqlOperations';
import type { HandlerTable } from '../types';
import { allOf, pageOf, withOneMore } from './listPage';

/** The account, its keys and its request log. */
export const accountHandlers = {
  createSandboxAccount: async (_ctx, { body }) => createSandboxAccount(body),
  getAccount: async (ctx) => toAccountResource(await getAccount(ctx.actor.accountId)),
  listApiKeys: async (ctx) => allOf((await listApiKeys(ctx.actor.accountId)).map(toApiKeyResource)),
  createApiKey: async (ctx, { body }) => createRestrictedKey(ctx.actor.accountId, body),
  revokeApiKey: async (ctx, { params }) => toApiKeyResource(await revokeApiKey(ctx.actor.accountId, params.id)),
  listLogs: async (ctx, { query }) =>
    pageOf((await listRequestLogs(ctx.key, withOneMore(query.limit), { includeDashboard: query.include_dashboard })).map(toLogEntryResource), query.limit),
} satisfies HandlerTable<'createSandboxAccount' | 'getAccount' | 'listApiKeys' | 'createApiKey' | 'revokeApiKey' | 'listLogs'>;

/** The account's overview of its payments and webhook deliveries (graphqlOperations.ts). */
export const accountGraphQLHandlers = {
  getOverview: async (ctx, { range }) => getOverview(ctx.actor.accountId, range),
  searchLogs: async (ctx, { limit, includeDashboard, filter }) => (await listRequestLogs(ctx.key, limit, { includeDashboard, ...filter })).map(toLogEntryResource),
} satisfies GraphQLHandlerTable<'getOverview' | 'searchLogs'>;
