import { DashboardLogsDocument, type DashboardLogsQuery, type LogFilter } from '../../../../generated/dashboard/documents';
import { useLiveQuery } from '../graphql';
import { useRereadOnEvents } from './events';

export type LogEntry = DashboardLogsQuery['logs'][number];
export type { LogFilter };

/**
 * The key's last 50 requests as `filter` narrows them, read again whenever the account stores an event
 * (a request that changed something made one): there is no feed of log entries.
 */
export function useLogs(filter: LogFilter) {
  // No source: both (the API leaves the dashboard's out unless told to include them).
  const [result, reexecute] = useLiveQuery({ query: DashboardLogsDocument, variables: { filter, includeDashboard: !filter.source } });
  const refresh = () => reexecute({ requestPolicy: 'network-only' });
  const [live] = useRereadOnEvents(refresh);
  return { result, live, refresh };
}
