import type { LogEntryResolvers, LogSource } from '../../../generated/graphql/resolvers-types';
import { toEnumName } from '../enums';

export const LogEntry: LogEntryResolvers = {
  requestId: (l) => l.request_id,
  errorCode: (l) => l.error_code,
  latencyMs: (l) => l.latency_ms,
  createdAt: (l) => l.created_at,
  source: (l) => toEnumName<LogSource>(l.source),
  requestBody: (l) => l.request_body,
  responseBody: (l) => l.response_body,
};
