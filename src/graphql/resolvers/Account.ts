import type { AccountResolvers } from '../../../generated/graphql/resolvers-types';

export const Account: AccountResolvers = {
  createdAt: (a) => a.created_at,
  referenceEntity: (a) => a.reference_entity,
};
