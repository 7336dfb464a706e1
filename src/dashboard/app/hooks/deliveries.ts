import { useMutation } from 'urql';
import { DashboardResendDocument, DeliveryFieldsFragmentDoc, type DeliveryFieldsFragment } from '../../../../generated/dashboard/documents';

export type Delivery = DeliveryFieldsFragment;
/** The fragment, for documents written elsewhere that list deliveries (a payment's page interpolates it). */
export const DELIVERY_FIELDS = DeliveryFieldsFragmentDoc;
export const useResendDelivery = () => useMutation(DashboardResendDocument);
