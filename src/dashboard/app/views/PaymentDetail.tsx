import { CopyButton } from '../components/CopyButton';
import { StatusBadge } from '../components/StatusBadge';
import { Time } from '../components/Time';
import { ErrorAlert } from '../graphql';
import { eventTypeName, formatAmount } from '../format';
import { usePaymentDeliveries, usePaymentDetail } from '../hooks/paymentDetail';
import { Loading, Page } from '../ui';
import { DeliveryList } from './Deliveries';
import { PaymentActions } from './paymentDetail/PaymentActions';
import { PaymentFacts } from './paymentDetail/PaymentFacts';
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
        <ErrorAlert error={error ?? `There is no payment ${id} in this account.`} />
      </Page>
    );
  }
  return (
    <Page title={id} heading={`Payment ${id}`}>
      <ErrorAlert error={error} />
      <PaymentFacts intent={intent} current={current} />

      <PaymentActions intent={{ ...current, amountRefunded: intent.amountRefunded }} onChanged={changed} />

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
