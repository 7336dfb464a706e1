import type { MutationResolvers } from '../../../generated/graphql/resolvers-types';
import { createClientToken, deleteClientToken } from '../../domain/clientTokens/clientToken.service';
import { requireOperation } from '../context';
import { restBody, validateBody } from '../input';

/** The client-token mutations: the REST routes' permission, body validation and service. */
export const ClientTokenMutations: Pick<MutationResolvers, 'createClientToken' | 'deleteClientToken'> = {
  createClientToken: async (_p, { input }, ctx) => {
    requireOperation(ctx, 'createClientToken');
    const body = validateBody<{ payment_intent: string; expires_in?: number }>(
      'createClientToken',
      restBody({ payment_intent: input.paymentIntent, expires_in: input.expiresIn }),
    );
    const created = await createClientToken(ctx.actor.accountId, body);
    return { id: created.id, token: created.token, paymentIntentId: created.payment_intent, expiresAt: created.expires_at, createdAt: created.created_at };
  },
  deleteClientToken: async (_p, { id }, ctx) => {
    requireOperation(ctx, 'deleteClientToken');
    await deleteClientToken(ctx.actor.accountId, id);
    return { id, deleted: true };
  },
};
