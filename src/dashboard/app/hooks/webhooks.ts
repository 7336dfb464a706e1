import { useMutation, useQuery } from 'urql';
import {
  DashboardCreateEndpointDocument,
  DashboardDeleteEndpointDocument,
  DashboardDeliveriesInStateDocument,
  DashboardPingDocument,
  DashboardRotateDocument,
  DashboardWebhooksDocument,
  type DashboardWebhooksQuery,
  type WebhookDeliveryState,
} from '../../../../generated/dashboard/documents';
import { useLiveQuery } from '../graphql';

export type WebhookEndpoint = DashboardWebhooksQuery['webhookEndpoints'][number];
export type { WebhookDeliveryState };

export const useWebhookEndpoints = () => useLiveQuery({ query: DashboardWebhooksDocument });
/** One endpoint's last 50 deliveries in `state`; paused while no state is chosen. */
export const useDeliveriesInState = (id: string, state: WebhookDeliveryState | null) =>
  useQuery({ query: DashboardDeliveriesInStateDocument, variables: { id, state }, pause: !state });
export const useCreateEndpoint = () => useMutation(DashboardCreateEndpointDocument);
export const useSendTestPing = () => useMutation(DashboardPingDocument);
export const useRotateSecret = () => useMutation(DashboardRotateDocument);
export const useDeleteEndpoint = () => useMutation(DashboardDeleteEndpointDocument);
