import { useState, type FormEvent } from 'react';
import { CopyButton } from '../components/CopyButton';
import { EllipsizedId } from '../components/EllipsizedId';
import { StatusBadge } from '../components/StatusBadge';
import { Time } from '../components/Time';
import { ErrorAlert, newIdempotencyKey } from '../graphql';
import { eventTypeName, formatAmount, formatEnum, formatNumber } from '../format';
import {
  useCancelPayment,
  usePaymentDeliveries,
  usePaymentDetail,
  useRefundPayment,
  useSimulateReferencePaid,
  type PaymentDetail as Detail,
} from '../hooks/paymentDetail';
import { Loading, Page } from '../ui';
import { DeliveryList } from './Deliveries';
import { SandboxTime } from './paymentDetail/SandboxTime';
import { Timeline } from './paymentDetail/Timeline';
import { buildTimeline } from './paymentDetail/timelineItems';
import './paymentDetail/paymentDetail.css';

export function PaymentDetail({ id }: { id: string }) {
  const { intent, current, loading, error, changes, changed } = usePaymentDetail(id);
  const deliveries = usePaymentDeliveries(id, changes);

  if (loading) return <Loading what="the payment" />;
  if (!intent || !current) {
    return (
      <Page title={id} heading={`Payment ${id}`}>
        <ErrorAlert error={error ?? `resource_not_found: no payment ${id} in this account`} />
      </Page>
    );
  }
  return (
    <Page title={id} heading={`Payment ${id}`}>
      <ErrorAlert error={error} />
      <dl className="facts">
        <dt>Id</dt>
        <dd>
          <EllipsizedId id={intent.id} what="payment id" />
        </dd>
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
              Entity {current.reference.entity}, number <span className="mono">{current.reference.number}</span>{' '}
              <CopyButton value={current.reference.number} what="reference number" />
              <br />
              <span className="muted">
                expires <SandboxTime iso={current.reference.expiresAt} />
              </span>
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
            <dd>
              {intent.merchantReference} <CopyButton value={intent.merchantReference} what="merchant reference" />
            </dd>
          </>
        )}
        <dt>Created</dt>
        <dd>
          <SandboxTime iso={intent.createdAt} />
        </dd>
      </dl>

      <Actions intent={current} onChanged={changed} />

      <h2 id="timeline-title">Timeline</h2>
      <Timeline items={buildTimeline(intent, current, deliveries.deliveries)} />
      {deliveries.error && <ErrorAlert error={deliveries.error} />}

      <h2 id="events-title">Events</h2>
      <ol aria-labelledby="events-title" className="timeline">
        {intent.events.nodes.map((e) => (
          <li key={e.id}>
            <code>{eventTypeName(e.type)}</code>{' '}
            <span className="muted">
              <Time iso={e.createdAt} clock="sandbox" /> · {e.id}
            </span>{' '}
            <CopyButton value={e.id} what={`event id ${e.id}`} />
          </li>
        ))}
      </ol>

      {intent.refunds.nodes.length > 0 && (
        <>
          <h2 id="refunds-title">Refunds</h2>
          <ul aria-labelledby="refunds-title" className="plain">
            {intent.refunds.nodes.map((r) => (
              <li key={r.id}>
                {r.id}: {formatAmount(r.amount, intent.currency)} <StatusBadge status={r.status} kind="refund" />{' '}
                <span className="muted">
                  <Time iso={r.createdAt} clock="sandbox" />
                </span>
              </li>
            ))}
          </ul>
        </>
      )}

      <section aria-labelledby="deliveries-title">
        <h2 id="deliveries-title">Webhook deliveries</h2>
        {deliveries.loaded ? (
          <DeliveryList
            deliveries={deliveries.deliveries}
            onResent={changed}
            empty="No deliveries of this payment's events (no endpoint listens to them, or none was registered)."
          />
        ) : (
          !deliveries.error && <Loading what="deliveries" />
        )}
      </section>
    </Page>
  );
}

function Actions({ intent, onChanged }: { intent: Detail; onChanged: () => void }) {
  const [cancelState, cancel] = useCancelPayment();
  const [refundState, refund] = useRefundPayment();
  const [paidState, simulatePaid] = useSimulateReferencePaid();
  const remaining = intent.amount - intent.amountRefunded;
  const [refundAmount, setRefundAmount] = useState('');
  const canCancel = intent.status === 'PENDING' || intent.status === 'PROCESSING';
  const canRefund = (intent.status === 'SUCCEEDED' || intent.status === 'PARTIALLY_REFUNDED') && remaining > 0;
  const reference = intent.status === 'PENDING' && intent.paymentMethod === 'MULTICAIXA_REFERENCE' ? intent.reference : null;
  if (!canCancel && !canRefund && !reference) return null;

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
        {reference && (
          <button type="button" disabled={paidState.fetching} onClick={() => after(simulatePaid({ reference: reference.number }))}>
            Simulate reference paid
          </button>
        )}
      </div>
      {canRefund && (
        <form onSubmit={doRefund} className="inline-form">
          <label>
            Refund amount (AOA, empty for all {formatNumber(remaining)})
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
