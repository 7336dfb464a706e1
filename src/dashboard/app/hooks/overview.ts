import { useEffect, useRef } from 'react';
import { useSubscription } from 'urql';
import { useLiveQuery } from '../graphql';
import {
  DashboardOverviewDocument,
  DashboardOverviewEventsDocument,
  type DashboardOverviewQuery,
  type OverviewRange,
} from '../../../../generated/dashboard/documents';

export type Overview = DashboardOverviewQuery['overview'];
export type { OverviewRange };

/** A burst of events (a payment's steps, its deliveries) reads the overview once, this long after the last of them. */
const REFRESH_AFTER_MS = 1000;

/** The overview of `range`, read again after the socket reconnects and after events (new payments, status changes, deliveries). */
export function useOverview(range: OverviewRange) {
  const [result, refetch] = useLiveQuery({ query: DashboardOverviewDocument, variables: { range } });
  const timer = useRef<ReturnType<typeof setTimeout>>();
  const [events] = useSubscription({ query: DashboardOverviewEventsDocument }, (_prev, data) => {
    clearTimeout(timer.current);
    timer.current = setTimeout(() => refetch({ requestPolicy: 'network-only' }), REFRESH_AFTER_MS);
    return data;
  });
  useEffect(() => () => clearTimeout(timer.current), []);
  return { overview: result.data?.overview, fetching: result.fetching, error: result.error ?? events.error };
}
