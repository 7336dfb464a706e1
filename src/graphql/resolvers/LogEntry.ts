import type { LogEntryResolvers } from '../../../generated/graphql/resolvers-types';

export const LogEntry: LogEntryResolvers = {
  requestId: (l) => l.request_id,
  errorCode: (l) => l.error_code,
  latencyMs: (l) => l.latency_ms,
  createdAt: (l) => l.created_at,
};
