import { searchPaymentIntents } from '../../domain/payments/paymentSearch';
import type { PaymentIntentFilter, PaymentIntentStatus } from '../../../generated/graphql/resolvers-types';
import { requireOperation, type GraphQLContext } from '../context';
import { methodToRest } from '../enums';
import { pageBounds } from '../limits';
import type { PaymentIntentConnectionModel } from '../models';
import { restConnection } from '../pagination';

/**
 * `Query.paymentIntents` with a `filter`: the dashboard's search (REST has no equivalent), with the
 * permission of the REST list and its cursors. `status` and `filter.status` together keep what both allow.
 */
export function paymentSearchQuery(
  ctx: GraphQLContext,
  filter: PaymentIntentFilter,
  args: { first: number; after: string | null | undefined; status: PaymentIntentStatus | null | undefined },
): Promise<PaymentIntentConnectionModel> {
  requireOperation(ctx, 'listPaymentIntents');
  const statuses = filter.status && args.status ? filter.status.filter((s) => s === args.status) : (filter.status ?? (args.status ? [args.status] : null));
  const search = {
    search: filter.search,
    statuses,
    paymentMethod: filter.paymentMethod ? methodToRest(filter.paymentMethod) : null,
    createdFrom: filter.createdFrom,
    createdTo: filter.createdTo,
  };
  const page = (limit: number, startingAfter: string | null | undefined) => searchPaymentIntents(ctx.actor, search, { limit, startingAfter });
  return restConnection(page, args.first, args.after, pageBounds('Query.paymentIntents').max);
}
