import type { Overview as OverviewResult } from '../../domain/overview/overviewService';
import type { Overview, OverviewRange, PaymentMethodCode } from '../../../generated/graphql/resolvers-types';
import type { GraphQLContext } from '../context';
import { toEnumName } from '../enums';
import { runGraphQLOperation } from '../input';

/**
 * `Query.overview`: the operation `getOverview` (REST has no such route; it needs the permissions of the
 * lists it summarises). Times become ISO strings and method codes enum names here, at the edge.
 */
export async function overviewQuery(ctx: GraphQLContext, range: OverviewRange): Promise<Overview> {
  return toGraphQL(await runGraphQLOperation(ctx, 'getOverview', { range }));
}

function toGraphQL(o: OverviewResult): Overview {
  const iso = <T extends { start: Date }>(b: T) => ({ ...b, start: b.start.toISOString() });
  return {
    ...o,
    from: o.from.toISOString(),
    to: o.to.toISOString(),
    buckets: o.buckets.map(iso),
    methods: o.methods.map((m) => ({ ...m, method: toEnumName<PaymentMethodCode>(m.method) })),
    webhooks: { ...o.webhooks, buckets: o.webhooks.buckets.map(iso) },
  };
}
