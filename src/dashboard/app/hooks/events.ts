import { DashboardEventsDocument, DashboardLiveEventsDocument, type EventFieldsFragment, type EventType } from '../../../../generated/dashboard/documents';
import { useEffect, useRef } from 'react';
import { useSubscription } from 'urql';
import { useLiveQuery } from '../graphql';

export type EventRow = EventFieldsFragment;
export type { EventType };

/** Rows a page of events holds (a compact table: two screens of them on a laptop). */
export const EVENTS_PAGE = 25;

/** A page of events: by type, by object (a payment's id), after a cursor. */
export const useEvents = (filters: { type: EventType | null; objectId: string | null; after: string | null }) =>
  useLiveQuery({ query: DashboardEventsDocument, variables: { first: EVENTS_PAGE, ...filters } });

/** Each event as it is stored; `onEvent` gets it (the hook keeps no list: the view merges it with the query's). */
export function useLiveEvents(onEvent: (event: EventRow) => void) {
  return useSubscription({ query: DashboardLiveEventsDocument }, (_previous, data) => {
    onEvent(data.events);
    return data;
  });
}

/** After an event, a read waits this long, so that a burst of events (a payment's few) reads once. */
const SETTLE_MS = 400;

/**
 * Reads a list again (`reread`) whenever the account stores an event, for lists that have no feed of
 * their own (logs, checkout sessions): what changed them almost always made an event, and the events'
 * feed is already open on the dashboard's socket.
 */
export function useRereadOnEvents(reread: () => void) {
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const latest = useRef(reread);
  latest.current = reread;
  useEffect(() => () => clearTimeout(timer.current), []);
  return useLiveEvents(() => {
    clearTimeout(timer.current);
    timer.current = setTimeout(() => latest.current(), SETTLE_MS);
  });
}
