import { DashboardLogsDocument, type DashboardLogsQuery } from '../../../../generated/dashboard/documents';
import { useLiveQuery } from '../graphql';

export type LogEntry = DashboardLogsQuery['logs'][number];

/** The key's last 50 requests; the dashboard's own only with `includeDashboard`. */
export const useLogs = (includeDashboard: boolean) => useLiveQuery({ query: DashboardLogsDocument, variables: { includeDashboard } });
