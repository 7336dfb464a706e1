import { useMutation, useQuery } from 'urql';
import {
  DashboardCheckoutDocument,
  DashboardCheckoutSessionsDocument,
  DashboardCreateCheckoutDocument,
  type CheckoutSessionFieldsFragment,
  type CheckoutSessionStatus,
} from '../../../../generated/dashboard/documents';
import { useLiveQuery } from '../graphql';
import { useRereadOnEvents } from './events';

export type CheckoutSessionRow = CheckoutSessionFieldsFragment;
export type { CheckoutSessionStatus };

export const SESSIONS_PAGE = 25;

/** A page of sessions, read again as events arrive (a session's payment and its completion make some). */
export function useCheckoutSessions(filters: { status: CheckoutSessionStatus | null; after: string | null }) {
  const [result, reexecute] = useLiveQuery({ query: DashboardCheckoutSessionsDocument, variables: { first: SESSIONS_PAGE, ...filters } });
  useRereadOnEvents(() => reexecute({ requestPolicy: 'network-only' }));
  return [result, reexecute] as const;
}
export const useCreateCheckoutSession = () => useMutation(DashboardCreateCheckoutDocument);
export const useCheckoutSession = (id: string) => useQuery({ query: DashboardCheckoutDocument, variables: { id } });
