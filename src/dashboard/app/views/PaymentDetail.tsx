import { useEffect, useState, type FormEvent } from 'react';
import { gql, useMutation, useSubscription } from 'urql';
import { ErrorAlert, newIdempotencyKey, useLiveQuery } from '../graphql';
import { eventTypeName, formatAmount, formatEnum, formatTime } from '../format';
import { newer, PAYMENT_ROW, type PaymentRow } from '../payments';
import { Loading, Page, StatusBadge } from '../ui';
import { DELIVERY_FIELDS, DeliveryList, type Delivery } from './Deliveries';

interface Detail extends PaymentRow {
  merchantReference: string | null;
  amountRefunded: number;
  fee: number | null;
  metadata: Record<string, string>;
  apiKeyId: string | null;
  refunds: Array<{ id: string; amount: number; status: string; createdAt: string }>;
  events: Array<{ id: string; type: string; createdAt: string }>;
}

/** The payment with its events, refunds and the webhook deliveries of its events (to every endpoint). */
const DETAIL = gql`
  query DashboardPayment($id: ID!) {
    paymentIntent(id: $id) {
      ...PaymentRow
      merchantReference
      amountRefunded
      fee
      metadata
      apiKeyId
      refunds(first: 100) {
        id
        amount
        status
        createdAt
      }
      events(first: 100) {
        id
        type
        createdAt
      }
    }
  }
  ${PAYMENT_ROW}
`;

/** Apart from the payment: a key without webhook_endpoints:read still sees the rest of the page. */
const DELIVERIES = gql`
  query DashboardPaymentDeliveries($id: ID!) {
    paymentIntent(id: $id) {
      id
      webhookDeliveries(first: 100) {
        ...DeliveryFields
      }
    }
  }
  ${DELIVERY_FIELDS}
`;

const UPDATED = gql`
  subscription DashboardPaymentUpdated($id: ID!) {
    paymentIntentUpdated(id: $id) {
      snapshot
      eventType
      paymentIntent {
        ...PaymentRow
      }
    }
  }
  ${PAYMENT_ROW}
`;

const CANCEL = gql`
  mutation DashboardCancel($id: ID!) {
    cancelPaymentIntent(id: $id) {
      ...PaymentRow
    }
  }
  ${PAYMENT_ROW}
`;

const REFUND = gql`
  mutation DashboardRefund($input: CreateRefundInput!, $key: String!) {
    createRefund(input: $input, idempotencyKey: $key) {
      id
      status
    }
  }
`;

const SIMULATE_PAID = gql`
  mutation DashboardSimulatePaid($reference: String!) {
    simulateReferencePaid(input: { reference: $reference }) {
      ...PaymentRow
    }
  }
  ${PAYMENT_ROW}
`;

/** After a change, deliveries are made in the background: read them again a few times, then while any is still PENDING. */
const FOLLOW_UP_MS = 1500;
const FOLLOW_UP_WINDOW_MS = 8000;

export function PaymentDetail({ id }: { id: string }) {
  const [result, refetch] = useLiveQuery<{ paymentIntent: Detail | null }>({
    query: DETAIL,
    variables: { id },
  });
  const [live, setLive] = useState<PaymentRow | undefined>();
  // Bumped on every change of the payment: the deliveries of its new events are then followed for a while.
  const [changes, setChanges] = useState(0);
  const changed = () => {
    refetch({ requestPolicy: 'network-only' });
    setChanges((n) => n + 1);
  };
  const [updates] = useSubscription({ query: UPDATED, variables: { id } }, (_prev: unknown, data: any) => {
    const message = data.paymentIntentUpdated;
    setLive((l) => newer(l, message.paymentIntent));
    if (!message.snapshot) changed();
    return data;
  });

  const intent = result.data?.paymentIntent;

  if (!result.data && result.fetching) return <Loading what="the payment" />;
  if (!intent) {
    return (
      <Page title={id} heading={`Payment ${id}`}>
        <ErrorAlert error={result.error ?? `resource_not_found: no payment ${id} in this account`} />
      </Page>
    );
  }
  const current = newer(intent, live ?? intent);
  return (
    <Page title={id} heading={`Payment ${id}`}>
      <ErrorAlert error={result.error ?? updates.error} />
      <dl className="facts">
        <dt>Status</dt>
        <dd>
          <span aria-live="polite" data-testid="payment-status">
            <StatusBadge status={current.status} />
          </span>
          {current.failureCode && <span className="muted"> {formatEnum(current.failureCode)}</span>}
        </dd>
        <dt>Amount</dt>
        <dd>{formatAmount(current.amount, current.currency)}</dd>
        <dt>Method</dt>
        <dd>{formatEnum(current.paymentMethod)}</dd>
        {current.customer && (
          <>
            <dt>Mobile</dt>
            <dd>{current.customer.mobile}</dd>
          </>
        )}
        {current.reference && (
          <>
            <dt>Reference</dt>
            <dd>
              Entity {current.reference.entity}, number {current.reference.number}, expires {formatTime(current.reference.expiresAt)}
            </dd>
          </>
        )}
        <dt>Refunded</dt>
        <dd>{formatAmount(intent.amountRefunded, intent.currency)}</dd>
        {intent.fee != null && (
          <>
            <dt>Fee</dt>
            <dd>{formatAmount(intent.fee, intent.currency)}</dd>
          </>
        )}
        {intent.merchantReference && (
          <>
            <dt>Merchant reference</dt>
            <dd>{intent.merchantReference}</dd>
          </>
        )}
        <dt>Created</dt>
        <dd>{formatTime(intent.createdAt)}</dd>
      </dl>

      <Actions intent={{ ...intent, ...current }} onChanged={changed} />

      <h2 id="events-title">Events</h2>
      <ol aria-labelledby="events-title" className="timeline">
        {intent.events.map((e) => (
          <li key={e.id}>
            <code>{eventTypeName(e.type)}</code> <span className="muted">{formatTime(e.createdAt)} · {e.id}</span>
          </li>
        ))}
      </ol>

      {intent.refunds.length > 0 && (
        <>
          <h2 id="refunds-title">Refunds</h2>
          <ul aria-labelledby="refunds-title" className="plain">
            {intent.refunds.map((r) => (
              <li key={r.id}>
                {r.id}: {formatAmount(r.amount, intent.currency)} <StatusBadge status={r.status} /> <span className="muted">{formatTime(r.createdAt)}</span>
              </li>
            ))}
          </ul>
        </>
      )}

      <section aria-labelledby="deliveries-title">
        <h2 id="deliveries-title">Webhook deliveries</h2>
        <PaymentDeliveries id={id} changes={changes} onResent={changed} />
      </section>
    </Page>
  );
}

function PaymentDeliveries({ id, changes, onResent }: { id: string; changes: number; onResent: () => void }) {
  const [result, refetch] = useLiveQuery<{ paymentIntent: { webhookDeliveries: Delivery[] } | null }>({ query: DELIVERIES, variables: { id } });
  const [followUntil, setFollowUntil] = useState(0);
  useEffect(() => {
    if (changes === 0) return;
    refetch({ requestPolicy: 'network-only' });
    setFollowUntil(Date.now() + FOLLOW_UP_WINDOW_MS);
  }, [changes, refetch]);
  const deliveries = result.data?.paymentIntent?.webhookDeliveries ?? [];
  const pending = deliveries.some((d) => d.state === 'PENDING');
  useEffect(() => {
    if (result.fetching || !(pending || Date.now() < followUntil)) return;
    const timer = setTimeout(() => refetch({ requestPolicy: 'network-only' }), FOLLOW_UP_MS);
    return () => clearTimeout(timer);
  }, [result.fetching, result.data, pending, followUntil, refetch]);

  if (result.error) return <ErrorAlert error={result.error} />;
  if (!result.data) return <Loading what="deliveries" />;
  return <DeliveryList deliveries={deliveries} onResent={onResent} empty="No deliveries of this payment's events (no endpoint listens to them, or none was registered)." />;
}

function Actions({ intent, onChanged }: { intent: Detail; onChanged: () => void }) {
  const [cancelState, cancel] = useMutation(CANCEL);
  const [refundState, refund] = useMutation(REFUND);
  const [paidState, simulatePaid] = useMutation(SIMULATE_PAID);
  const remaining = intent.amount - intent.amountRefunded;
  const [refundAmount, setRefundAmount] = useState('');
  const canCancel = intent.status === 'PENDING' || intent.status === 'PROCESSING';
  const canRefund = (intent.status === 'SUCCEEDED' || intent.status === 'PARTIALLY_REFUNDED') && remaining > 0;
  const canSimulatePaid = intent.status === 'PENDING' && intent.paymentMethod === 'MULTICAIXA_REFERENCE' && intent.reference;
  if (!canCancel && !canRefund && !canSimulatePaid) return null;

  const doRefund = async (e: FormEvent) => {
    e.preventDefault();
    const amount = refundAmount.trim() ? Number(refundAmount) : undefined;
    const res = await refund({ input: { paymentIntent: intent.id, ...(amount ? { amount } : {}) }, key: newIdempotencyKey() });
    if (!res.error) {
      setRefundAmount('');
      onChanged();
    }
  };
  const after = (p: Promise<{ error?: unknown }>) => p.then((res) => !res.error && onChanged());

  return (
    <section aria-labelledby="actions-title" className="card">
      <h2 id="actions-title">Actions</h2>
      <div className="actions">
        {canCancel && (
          <button type="button" disabled={cancelState.fetching} onClick={() => after(cancel({ id: intent.id }))}>
            Cancel
          </button>
        )}
        {canSimulatePaid && (
          <button type="button" disabled={paidState.fetching} onClick={() => after(simulatePaid({ reference: intent.reference!.number }))}>
            Simulate reference paid
          </button>
        )}
      </div>
      {canRefund && (
        <form onSubmit={doRefund} className="inline-form">
          <label>
            Refund amount (AOA, empty for all {remaining})
            <input type="number" inputMode="numeric" min={1} max={remaining} value={refundAmount} onChange={(e) => setRefundAmount(e.target.value)} />
          </label>
          <button type="submit" disabled={refundState.fetching}>
            Refund
          </button>
        </form>
      )}
      <ErrorAlert error={cancelState.error ?? refundState.error ?? paidState.error} />
    </section>
  );
}
