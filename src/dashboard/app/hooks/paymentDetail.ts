import { useCallback, useEffect, useState } from 'react';
import { useMutation, useSubscription } from 'urql';
import { useLiveQuery } from '../graphql';
import { newer, type PaymentRow } from '../payments';
import {
  DashboardPaymentCancelDocument,
  DashboardPaymentDetailDeliveriesDocument,
  DashboardPaymentDetailDocument,
  DashboardPaymentDetailUpdatedDocument,
  DashboardPaymentRefundDocument,
  DashboardPaymentSimulatePaidDocument,
  type DashboardPaymentDetailDeliveriesQuery,
  type DashboardPaymentDetailQuery,
} from '../../../../generated/dashboard/documents';

export type PaymentDetail = NonNullable<DashboardPaymentDetailQuery['paymentIntent']>;
export type PaymentDelivery = NonNullable<DashboardPaymentDetailDeliveriesQuery['paymentIntent']>['webhookDeliveries']['nodes'][number];

/**
 * The payment, kept current: its own subscription carries each change (PROCESSING too, which has no
 * event); a change that is not the first snapshot reads the page again (new events, refunds) and bumps
 * `changes`, after which the deliveries of the new events are followed for a while.
 */
export function usePaymentDetail(id: string) {
  const [result, refetch] = useLiveQuery({ query: DashboardPaymentDetailDocument, variables: { id } });
  const [live, setLive] = useState<PaymentRow | undefined>();
  const [changes, setChanges] = useState(0);
  const changed = useCallback(() => {
    refetch({ requestPolicy: 'network-only' });
    setChanges((n) => n + 1);
  }, [refetch]);
  const [updates] = useSubscription({ query: DashboardPaymentDetailUpdatedDocument, variables: { id } }, (_prev, data) => {
    const message = data.paymentIntentUpdated;
    setLive((l) => newer(l, message.paymentIntent));
    if (!message.snapshot) changed();
    return data;
  });
  const intent = result.data?.paymentIntent ?? null;
  return {
    intent,
    /** The intent with the newest status it is known to have (the read or a later live message). */
    current: intent ? { ...intent, ...newer(intent, live ?? intent) } : null,
    loading: !result.data && result.fetching,
    error: result.error ?? updates.error,
    changes,
    changed,
  };
}

/**
 * After a change, deliveries are made in the background: read them again a few times, then while any is
 * still to be sent, and now and then while one waits for a retry (its next attempt may be hours away).
 */
const FOLLOW_UP_MS = 1500;
const FOLLOW_UP_WINDOW_MS = 8000;
const RETRYING_MS = 5000;

export function usePaymentDeliveries(id: string, changes: number) {
  const [result, refetch] = useLiveQuery({ query: DashboardPaymentDetailDeliveriesDocument, variables: { id } });
  const [followUntil, setFollowUntil] = useState(0);
  useEffect(() => {
    if (changes === 0) return;
    refetch({ requestPolicy: 'network-only' });
    setFollowUntil(Date.now() + FOLLOW_UP_WINDOW_MS);
  }, [changes, refetch]);
  const deliveries = result.data?.paymentIntent?.webhookDeliveries.nodes ?? [];
  const pending = deliveries.some((d) => d.state === 'PENDING');
  const retrying = deliveries.some((d) => d.state === 'RETRYING');
  useEffect(() => {
    const wait = pending || Date.now() < followUntil ? FOLLOW_UP_MS : retrying ? RETRYING_MS : null;
    if (result.fetching || wait === null) return;
    const timer = setTimeout(() => refetch({ requestPolicy: 'network-only' }), wait);
    return () => clearTimeout(timer);
  }, [result.fetching, result.data, pending, retrying, followUntil, refetch]);
  return { deliveries, loaded: Boolean(result.data), error: result.error };
}

export const useCancelPayment = () => useMutation(DashboardPaymentCancelDocument);
export const useRefundPayment = () => useMutation(DashboardPaymentRefundDocument);
export const useSimulateReferencePaid = () => useMutation(DashboardPaymentSimulatePaidDocument);
