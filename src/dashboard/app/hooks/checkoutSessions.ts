import { useMutation, useQuery } from 'urql';
import { DashboardCheckoutDocument, DashboardCreateCheckoutDocument } from '../../../../generated/dashboard/documents';

export const useCheckoutSession = (id: string) => useQuery({ query: DashboardCheckoutDocument, variables: { id } });
export const useCreateCheckoutSession = () => useMutation(DashboardCreateCheckoutDocument);
