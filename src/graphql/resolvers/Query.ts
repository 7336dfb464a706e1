import type { LogFilter as LogFilterInput, QueryResolvers } from '../../../generated/graphql/resolvers-types';
import { keysLastUsed } from '../../domain/accounts/apiKeyService';
import type { LogFilter } from '../../domain/logs/logFacets';
import type { ResultBody } from '../../operations/execute';
import { tokenPaymentIntent } from '../clientTokenResolvers';
import { requireOperation, type GraphQLContext } from '../context';
import { eventTypeToRest } from '../enums';
import { restBody, run, runGraphQLOperation } from '../input';
import { pageBounds, pageSize } from '../limits';
import { LIST_BOUNDS } from '../listBounds';
import { restConnection } from '../pagination';
import { overviewQuery } from './overviewQuery';
import { paymentSearchQuery } from './paymentSearchQuery';

/**
 * Each field runs the REST operation it mirrors (operations/execute), lists included; what REST has no
 * route for (`webhookEndpoint(id)`, the search, the overview) runs an operation only GraphQL has, on the
 * same path (runGraphQLOperation, operations/graphqlOperations.ts).
 */
export const Query: QueryResolvers = {
  account: (_p, _a, ctx) => run(ctx, 'getAccount'),
  paymentMethods: async (_p, _a, ctx) => [...(await run(ctx, 'listPaymentMethods')).data],
  paymentIntent: (_p, { id }, ctx) => {
    if (ctx.clientToken) return tokenPaymentIntent(ctx.clientToken, id);
    // Read through the request's loader, so that the intent's refunds (stored inside it) need no second
    // read; checked first so that nothing is read for a caller without the permission.
    requireOperation(ctx, 'getPaymentIntent');
    const prefetched = ctx.loaders.paymentRecord.load(id);
    prefetched.catch(() => undefined); // execute() may refuse before its handler reads it; the handler sees a failure
    return run(ctx, 'getPaymentIntent', { params: { id } }, { prefetched });
  },
  // The REST list, page by page (hasNextPage: restConnection); with a filter, the dashboard's search.
  paymentIntents: async (_p, { first, after, status, filter: search }, ctx) => {
    if (search) return paymentSearchQuery(ctx, search, { first: pageSize('Query.paymentIntents', first), after, status });
    return restConnection(restPage(ctx, 'listPaymentIntents', restBody({ status })), pageSize('Query.paymentIntents', first), after, pageBounds('Query.paymentIntents').max);
  },
  refund: (_p, { id }, ctx) => run(ctx, 'getRefund', { params: { id } }),
  paymentLink: (_p, { id }, ctx) => run(ctx, 'getPaymentLink', { params: { id } }),
  paymentLinks: async (_p, _a, ctx) => (await run(ctx, 'listPaymentLinks')).data,
  checkoutSession: (_p, { id }, ctx) => run(ctx, 'getCheckoutSession', { params: { id } }),
  // At most ACCOUNT_CAPS.webhookEndpoints exist; the cut keeps the answer to the bound the cost counts on.
  webhookEndpoints: async (_p, _a, ctx) => (await run(ctx, 'listWebhookEndpoints')).data.slice(0, LIST_BOUNDS['Query.webhookEndpoints']),
  webhookEndpoint: (_p, { id }, ctx) => runGraphQLOperation(ctx, 'getWebhookEndpoint', { id }),
  events: async (_p, { first, after, type, objectId }, ctx) => {
    const filter = restBody({ type: type ? eventTypeToRest(type) : undefined, object_id: objectId });
    return restConnection(restPage(ctx, 'listEvents', filter), pageSize('Query.events', first), after, pageBounds('Query.events').max);
  },
  logs: async (_p, { first, includeDashboard, filter }, ctx) => {
    const limit = pageSize('Query.logs', first);
    if (filter) return runGraphQLOperation(ctx, 'searchLogs', { limit, includeDashboard: includeDashboard === true, filter: logFilter(filter) });
    return (await run(ctx, 'listLogs', { query: { limit: String(limit), include_dashboard: String(includeDashboard === true) } })).data;
  },
  checkoutSessions: (_p, { first, after, status }, ctx) => {
    const page = (limit: number, startingAfter: string | null | undefined) => runGraphQLOperation(ctx, 'listCheckoutSessions', { limit, status: status ?? null, startingAfter });
    const bounds = pageBounds('Query.checkoutSessions');
    return restConnection(page, pageSize('Query.checkoutSessions', first), after, bounds.max);
  },
  // The REST list (only the full secret key), then when each key was last used (GraphQL only).
  apiKeys: async (_p, _a, ctx) => {
    const keys = (await run(ctx, 'listApiKeys')).data;
    const used = await keysLastUsed(ctx.actor.accountId);
    return keys.map((k) => ({ ...k, last_used_at: k.revoked_at ? null : (used.get(k.id)?.toISOString() ?? null) }));
  },
  sandboxClock: (_p, _a, ctx) => run(ctx, 'getSandboxClock'),
  overview: (_p, { range }, ctx) => overviewQuery(ctx, range ?? 'LAST_24_HOURS'),
};

const STATUS_CLASS = { SUCCESS_2XX: 2, CLIENT_ERROR_4XX: 4, SERVER_ERROR_5XX: 5 } as const;

/** GraphQL's LogFilter as the log service takes it (blank text is no filter). */
function logFilter(f: LogFilterInput): LogFilter {
  return {
    method: f.method?.trim() || null,
    statusClass: f.statusClass ? STATUS_CLASS[f.statusClass] : null,
    pathPrefix: f.pathPrefix?.trim() || null,
    source: f.source === 'DASHBOARD' ? 'dashboard' : f.source === 'API' ? 'api' : null,
  };
}

/**
 * One page of a REST list for restConnection: its filters, `limit`, and the cursor as `starting_after`
 * (an empty `after` is none, as REST's absent parameter).
 */
function restPage<K extends 'listPaymentIntents' | 'listEvents'>(ctx: GraphQLContext, operationId: K, filter: Record<string, unknown>) {
  return async (limit: number, startingAfter: string | null | undefined) =>
    (await run(ctx, operationId, { query: { limit: String(limit), ...filter, ...(startingAfter ? { starting_after: startingAfter } : {}) } })).data as ResultBody<K>['data'];
}
