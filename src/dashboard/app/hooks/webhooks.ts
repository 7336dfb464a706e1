import { useEffect, useRef } from 'react';
import { useMutation, useQuery, useSubscription } from 'urql';
import {
  DashboardAckEventsDocument,
  DashboardClearChaosDocument,
  DashboardCreateEndpointDocument,
  DashboardDeleteEndpointDocument,
  DashboardEndpointDeliveriesDocument,
  DashboardEndpointDocument,
  DashboardEndpointEventsDocument,
  DashboardPendingEventsDocument,
  DashboardPingDocument,
  DashboardRotateDocument,
  DashboardSetChaosDocument,
  DashboardWebhooksDocument,
  type ChaosFieldsFragment,
  type EndpointFieldsFragment,
  type EventType,
  type WebhookDeliveryState,
  type WebhookEndpointMode,
} from '../../../../generated/dashboard/documents';
import { useLiveQuery } from '../graphql';

export type WebhookEndpoint = EndpointFieldsFragment;
export type Chaos = ChaosFieldsFragment;
export type { EventType, WebhookDeliveryState, WebhookEndpointMode };

/** The pending events a pull endpoint's page lists: the REST route's default page (`limit` 20). */
export const PENDING_PAGE = 20;
/** Deliveries per page on an endpoint's page: 20 rows keep it within a few screens on a phone. */
export const DELIVERY_PAGE = 20;

export const useWebhookEndpoints = () => useLiveQuery({ query: DashboardWebhooksDocument });
export const useWebhookEndpoint = (id: string) => useLiveQuery({ query: DashboardEndpointDocument, variables: { id } });
/** One page of a push endpoint's deliveries; paused for a pull endpoint (nothing is sent to it). */
export const useEndpointDeliveries = (
  id: string,
  page: { after: string; state: WebhookDeliveryState | null; eventType: EventType | null },
  pause: boolean,
) =>
  useLiveQuery({
    query: DashboardEndpointDeliveriesDocument,
    variables: { id, first: DELIVERY_PAGE, after: page.after || null, state: page.state, eventType: page.eventType },
    pause,
  });
/**
 * A pull endpoint's first page of unacknowledged events and one more: the field has no `hasMore`, so the
 * extra one says whether more wait. Paused for a push endpoint (the field is an error there).
 */
export const usePendingEvents = (id: string, pull: boolean) =>
  useQuery({ query: DashboardPendingEventsDocument, variables: { id, first: PENDING_PAGE + 1 }, pause: !pull });
export const useCreateEndpoint = () => useMutation(DashboardCreateEndpointDocument);
export const useSendTestPing = () => useMutation(DashboardPingDocument);
export const useRotateSecret = () => useMutation(DashboardRotateDocument);
export const useDeleteEndpoint = () => useMutation(DashboardDeleteEndpointDocument);
export const useSetChaos = () => useMutation(DashboardSetChaosDocument);
export const useClearChaos = () => useMutation(DashboardClearChaosDocument);
export const useAckEvents = () => useMutation(DashboardAckEventsDocument);

/** How long after an event the endpoint page reloads: its deliveries' first attempts take a moment. */
const SETTLE_MS = 1500;

/**
 * Calls `onChange` shortly after the account's events (once for a burst of them): a new event makes a
 * delivery to each matching push endpoint, or waits for a pull endpoint. Retries later on are not
 * events: the page's Refresh shows them.
 */
export function useEndpointLive(onChange: () => void) {
  const latest = useRef(onChange);
  latest.current = onChange;
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  useSubscription({ query: DashboardEndpointEventsDocument }, (_previous, data) => {
    clearTimeout(timer.current);
    timer.current = setTimeout(() => latest.current(), SETTLE_MS);
    return data;
  });
}
