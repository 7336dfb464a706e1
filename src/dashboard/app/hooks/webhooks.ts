import { useMutation, useQuery } from 'urql';
import {
  DashboardClearChaosDocument,
  DashboardCreateEndpointDocument,
  DashboardDeleteEndpointDocument,
  DashboardDeliveriesInStateDocument,
  DashboardPendingEventsDocument,
  DashboardPingDocument,
  DashboardRotateDocument,
  DashboardWebhooksDocument,
  type ChaosFieldsFragment,
  type DashboardWebhooksQuery,
  type WebhookDeliveryState,
  type WebhookEndpointMode,
} from '../../../../generated/dashboard/documents';
import { useLiveQuery } from '../graphql';

export type WebhookEndpoint = DashboardWebhooksQuery['webhookEndpoints'][number];
export type Chaos = ChaosFieldsFragment;
export type { WebhookDeliveryState, WebhookEndpointMode };

/** The pending events a pull endpoint's card lists: the REST route's default page (`limit` 20). */
export const PENDING_PAGE = 20;

export const useWebhookEndpoints = () => useLiveQuery({ query: DashboardWebhooksDocument });
/** One endpoint's last 50 deliveries in `state`; paused while no state is chosen. */
export const useDeliveriesInState = (id: string, state: WebhookDeliveryState | null) =>
  useQuery({ query: DashboardDeliveriesInStateDocument, variables: { id, state }, pause: !state });
/**
 * A pull endpoint's first page of unacknowledged events and one more: the field has no `hasMore`, so the
 * extra one says whether more wait. Paused for a push endpoint (the field is an error there).
 */
export const usePendingEvents = (id: string, pull: boolean) =>
  useLiveQuery({ query: DashboardPendingEventsDocument, variables: { id, first: PENDING_PAGE + 1 }, pause: !pull });
export const useCreateEndpoint = () => useMutation(DashboardCreateEndpointDocument);
export const useSendTestPing = () => useMutation(DashboardPingDocument);
export const useRotateSecret = () => useMutation(DashboardRotateDocument);
export const useDeleteEndpoint = () => useMutation(DashboardDeleteEndpointDocument);
export const useClearChaos = () => useMutation(DashboardClearChaosDocument);
