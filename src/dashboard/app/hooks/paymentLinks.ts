import { useMutation, useQuery } from 'urql';
import { DashboardCreateLinkDocument, DashboardDeactivateLinkDocument, DashboardLinkQrDocument, DashboardLinksDocument, type DashboardLinksQuery } from '../../../../generated/dashboard/documents';
import { useLiveQuery } from '../graphql';

export type PaymentLink = DashboardLinksQuery['paymentLinks'][number];

export const usePaymentLinks = () => useLiveQuery({ query: DashboardLinksDocument });
export const usePaymentLinkQr = (id: string) => useQuery({ query: DashboardLinkQrDocument, variables: { id } });
export const useCreatePaymentLink = () => useMutation(DashboardCreateLinkDocument);
export const useDeactivatePaymentLink = () => useMutation(DashboardDeactivateLinkDocument);
