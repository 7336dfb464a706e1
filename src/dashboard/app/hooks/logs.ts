import { useEffect, useRef } from 'react';
import { DashboardLogsDocument, type DashboardLogsQuery, type LogFilter } from '../../../../generated/dashboard/documents';
import { useLiveQuery } from '../graphql';
import { useLiveEvents } from './events';

export type LogEntry = DashboardLogsQuery['logs'][number];
export type { LogFilter };

/** After an event, the read waits this long, so that a burst of events (a payment's few) reads once. */
const SETTLE_MS = 400;

/**
 * The key's last 50 requests as `filter` narrows them, read again whenever the account stores an event
 * (a request that changed something made one): there is no feed of log entries, and the events' feed
 * is already open on the dashboard's socket.
 */
export function useLogs(filter: LogFilter) {
  // No source: both (the API leaves the dashboard's out unless told to include them).
  const [result, reexecute] = useLiveQuery({ query: DashboardLogsDocument, variables: { filter, includeDashboard: !filter.source } });
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const [live] = useLiveEvents(() => {
    clearTimeout(timer.current);
    timer.current = setTimeout(() => reexecute({ requestPolicy: 'network-only' }), SETTLE_MS);
  });
  useEffect(() => () => clearTimeout(timer.current), []);
  return { result, live, refresh: () => reexecute({ requestPolicy: 'network-only' }) };
}
