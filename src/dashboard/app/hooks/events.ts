import { DashboardEventsDocument, DashboardLiveEventsDocument, type EventFieldsFragment } from '../../../../generated/dashboard/documents';
import { useSubscription } from 'urql';
import { useLiveQuery } from '../graphql';

export type EventRow = EventFieldsFragment;

export const useEvents = () => useLiveQuery({ query: DashboardEventsDocument });
/** Each event as it is stored; `onEvent` gets it (the hook keeps no list: the view merges it with the query's). */
export function useLiveEvents(onEvent: (event: EventRow) => void) {
  return useSubscription({ query: DashboardLiveEventsDocument }, (_previous, data) => {
    onEvent(data.events);
    return data;
  });
}
