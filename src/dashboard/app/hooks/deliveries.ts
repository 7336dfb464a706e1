import { useMutation, useQuery } from 'urql';
import { DashboardDeliveryDetailDocument, DashboardResendDocument, DeliveryFieldsFragmentDoc, type DeliveryFieldsFragment } from '../../../../generated/dashboard/documents';

export type Delivery = DeliveryFieldsFragment;
/** The fragment, for documents written elsewhere that list deliveries (a payment's page interpolates it). */
export const DELIVERY_FIELDS = DeliveryFieldsFragmentDoc;
export const useResendDelivery = () => useMutation(DashboardResendDocument);
/** A delivery's every attempt and request headers, for its detail pane (network-only: attempts go on). */
export const useDeliveryDetail = (id: string) => useQuery({ query: DashboardDeliveryDetailDocument, variables: { id }, requestPolicy: 'network-only' });
