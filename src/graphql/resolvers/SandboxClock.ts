import type { SandboxClockResolvers } from '../../../generated/graphql/resolvers-types';

export const SandboxClock: SandboxClockResolvers = {
  offsetSeconds: (c) => c.offset_seconds,
};
