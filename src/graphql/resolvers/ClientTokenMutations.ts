import type { MutationResolvers } from '../../../generated/graphql/resolvers-types';
import { restBody, run } from '../input';

/** The client-token mutations: the REST operations run for the caller (operations/execute), their answers in GraphQL's shape. */
export const ClientTokenMutations: Pick<MutationResolvers, 'createClientToken' | 'deleteClientToken'> = {
  createClientToken: async (_p, { input }, ctx) => {
    const created = await run(ctx, 'createClientToken', { body: restBody({ payment_intent: input.paymentIntent, expires_in: input.expiresIn }) });
    return { id: created.id, token: created.token, paymentIntentId: created.payment_intent, expiresAt: created.expires_at, createdAt: created.created_at };
  },
  deleteClientToken: async (_p, { id }, ctx) => {
    await run(ctx, 'deleteClientToken', { params: { id } });
    return { id, deleted: true };
  },
};
