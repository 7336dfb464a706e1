import { useMutation, useQuery } from 'urql';
import {
  DashboardCheckoutDocument,
  DashboardCheckoutSessionsDocument,
  DashboardCreateCheckoutDocument,
  type CheckoutSessionFieldsFragment,
  type CheckoutSessionStatus,
} from '../../../../generated/dashboard/documents';
import { useLiveQuery } from '../graphql';

export type CheckoutSessionRow = CheckoutSessionFieldsFragment;
export type { CheckoutSessionStatus };

export const SESSIONS_PAGE = 25;

export const useCheckoutSessions = (filters: { status: CheckoutSessionStatus | null; after: string | null }) =>
  useLiveQuery({ query: DashboardCheckoutSessionsDocument, variables: { first: SESSIONS_PAGE, ...filters } });
export const useCreateCheckoutSession = () => useMutation(DashboardCreateCheckoutDocument);
export const useCheckoutSession = (id: string) => useQuery({ query: DashboardCheckoutDocument, variables: { id } });
