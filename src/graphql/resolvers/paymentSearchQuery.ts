import type { PaymentIntentFilter, PaymentIntentStatus } from '../../../generated/graphql/resolvers-types';
import type { GraphQLContext } from '../context';
import { methodToRest } from '../enums';
import { runGraphQLOperation } from '../input';
import { pageBounds } from '../limits';
import type { PaymentIntentConnectionModel } from '../models';
import { restConnection } from '../pagination';

/**
 * `Query.paymentIntents` with a `filter`: the dashboard's search (REST has no equivalent), the operation
 * `searchPaymentIntents` a page at a time, with the REST list's cursors. `status` and `filter.status`
 * together keep what both allow.
 */
export function paymentSearchQuery(
  ctx: GraphQLContext,
  filter: PaymentIntentFilter,
  args: { first: number; after: string | null | undefined; status: PaymentIntentStatus | null | undefined },
): Promise<PaymentIntentConnectionModel> {
  const statuses = filter.status && args.status ? filter.status.filter((s) => s === args.status) : (filter.status ?? (args.status ? [args.status] : null));
  const search = {
    search: filter.search,
    statuses,
    paymentMethod: filter.paymentMethod ? methodToRest(filter.paymentMethod) : null,
    createdFrom: filter.createdFrom,
    createdTo: filter.createdTo,
  };
  const page = (limit: number, startingAfter: string | null | undefined) => runGraphQLOperation(ctx, 'searchPaymentIntents', { search, limit, startingAfter });
  return restConnection(page, args.first, args.after, pageBounds('Query.paymentIntents').max);
}
