import { DashboardEventsDocument, DashboardLiveEventsDocument, type EventFieldsFragment, type EventType } from '../../../../generated/dashboard/documents';
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
