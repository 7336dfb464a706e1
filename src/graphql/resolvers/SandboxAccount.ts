import type { SandboxAccountResolvers } from '../../../generated/graphql/resolvers-types';

export const SandboxAccount: SandboxAccountResolvers = {
  createdAt: (a) => a.created_at,
};
