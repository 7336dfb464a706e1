import type { NodeResolvers, QueryResolvers, ResolversParentTypes } from '../../../generated/graphql/resolvers-types';
import { ApiError } from '../../errors';
import type { GraphQLContext } from '../context';
import { run, runGraphQLOperation } from '../input';
import { Query } from './Query';

/**
 * Relay's object identification (schema.graphql, `Node`): `node(id:)` and `nodes(ids:)` read an object by
 * its id alone. The id's prefix names its type (the REST ids: `pay_…`, `rf_…`); each is read as its typed
 * field or its REST operation reads it, with that operation's permission and errors, so `node` grants
 * nothing the typed fields do not. An id no type has a prefix for is not found, like an unknown id of a
 * known type.
 */
type NodeModel = ResolversParentTypes['Node'];
type NodeTypeName = 'Account' | 'ApiKey' | 'PaymentIntent' | 'Refund' | 'PaymentLink' | 'CheckoutSession' | 'WebhookEndpoint' | 'WebhookDelivery' | 'Event';

interface NodeType {
  name: NodeTypeName;
  read(id: string, ctx: GraphQLContext): Promise<NodeModel>;
}

const byTyped = <K extends 'paymentIntent' | 'refund' | 'paymentLink' | 'checkoutSession' | 'webhookEndpoint'>(field: K) =>
  async (id: string, ctx: GraphQLContext): Promise<NodeModel> => {
    const resolve = Query[field] as (parent: unknown, args: { id: string }, ctx: GraphQLContext, info: never) => Promise<NodeModel | null>;
    const found = await resolve({}, { id }, ctx, undefined as never);
    if (!found) throw ApiError.notFound('object', id);
    return found;
  };

/** By id prefix, longest first where one prefix starts another. */
const NODE_TYPES: ReadonlyArray<readonly [prefix: string, type: NodeType]> = [
  ['pay_', { name: 'PaymentIntent', read: byTyped('paymentIntent') }],
  ['rf_', { name: 'Refund', read: byTyped('refund') }],
  ['plink_', { name: 'PaymentLink', read: byTyped('paymentLink') }],
  ['cs_', { name: 'CheckoutSession', read: byTyped('checkoutSession') }],
  ['whe_', { name: 'WebhookEndpoint', read: byTyped('webhookEndpoint') }],
  ['whd_', { name: 'WebhookDelivery', read: (id, ctx) => runGraphQLOperation(ctx, 'getWebhookDelivery', { id }) }],
  ['evt_', { name: 'Event', read: (id, ctx) => runGraphQLOperation(ctx, 'getEvent', { id }) }],
  [
    'key_',
    {
      name: 'ApiKey',
      // REST reads keys as a list only (GET /api_keys, the full secret key); a key is found in it.
      read: async (id, ctx) => {
        const key = (await run(ctx, 'listApiKeys')).data.find((k) => k.id === id);
        if (!key) throw ApiError.notFound('api_key', id);
        return key;
      },
    },
  ],
  [
    'acct_',
    {
      name: 'Account',
      read: async (id, ctx) => {
        const account = await run(ctx, 'getAccount');
        if (account.id !== id) throw ApiError.notFound('account', id);
        return account;
      },
    },
  ],
];

function nodeTypeOf(id: string): NodeType | undefined {
  return NODE_TYPES.find(([prefix]) => id.startsWith(prefix))?.[1];
}

async function readNode(id: string, ctx: GraphQLContext): Promise<NodeModel> {
  const type = nodeTypeOf(id);
  if (!type) throw ApiError.notFound('object', id);
  return type.read(id, ctx);
}

/** The most ids one `nodes` reads (limits.ts prices what it selects once per id). */
export const MAX_NODE_IDS = 100;

export const NodeQuery: Pick<QueryResolvers, 'node' | 'nodes'> = {
  node: (_p, { id }, ctx) => readNode(id, ctx),
  nodes: async (_p, { ids }, ctx) => {
    if (ids.length > MAX_NODE_IDS) throw ApiError.invalid(`nodes takes at most ${MAX_NODE_IDS} ids (got ${ids.length})`);
    // Each id on its own: one that cannot be read is null at its place, with its error (graphql-js puts
    // a rejected item's error at its path), and the others are still answered.
    return ids.map((id) => readNode(id, ctx));
  },
};

export const Node: NodeResolvers = {
  __resolveType: (node) => nodeTypeOf(node.id)?.name ?? null,
};
