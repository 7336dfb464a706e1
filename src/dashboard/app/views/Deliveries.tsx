import { ErrorAlert } from '../graphql';
import { eventTypeName, formatMs } from '../format';
import { useResendDelivery, type Delivery } from '../hooks/deliveries';
import { CopyButton } from '../components/CopyButton';
import { SignedBody } from '../components/JsonBody';
import { EllipsizedId } from '../components/EllipsizedId';
import { EmptyState } from '../components/EmptyState';
import { Time } from '../components/Time';
import { ResendButton } from './webhooks/ResendButton';
import { chaosLabel, DeliveryOutcome, isChaosCopy, statusText } from './webhooks/deliveryWords';

// Kept for the payment page (views/PaymentDetail.tsx), which lists deliveries with this component.
export { DELIVERY_FIELDS, type Delivery } from '../hooks/deliveries';

/** Deliveries with what was sent byte for byte (body and Service-Signature) and a "Resend" each. */
export function DeliveryList({ deliveries, onResent, empty }: { deliveries: Delivery[]; onResent: () => void; empty: string }) {
  if (deliveries.length === 0) return <EmptyState title={empty}>Deliveries appear here when an event is sent to an endpoint (try "Send test ping").</EmptyState>;
  return (
    <ul className="deliveries plain">
      {deliveries.map((d) => (
        <DeliveryItem key={d.id} delivery={d} onResent={onResent} />
      ))}
    </ul>
  );
}

/** Why a failed genuine delivery failed and what comes next; nothing for chaos copies (sent once, by design). */
export function DeliveryWhy({ delivery: d }: { delivery: Delivery }) {
  if (isChaosCopy(d) || (d.state !== 'RETRYING' && d.state !== 'DEAD_LETTER')) return null;
  return (
    <p className="why" data-testid="delivery-why">
      {d.lastError ? `Failed: ${d.lastError}.` : 'The last attempt failed.'}{' '}
      {d.nextAttemptAt ? (
        <>
          Next retry <Time iso={d.nextAttemptAt} clock="sandbox" relative />.
        </>
      ) : (
        'No more retries: use Resend to try again.'
      )}
    </p>
  );
}

/** The delivery's and its event's ids, as terms of a list of facts (with copy buttons). */
export function DeliveryIdFacts({ delivery: d }: { delivery: Pick<Delivery, 'id' | 'eventId'> }) {
  return (
    <>
      <dt>Delivery</dt>
      <dd>
        <EllipsizedId id={d.id} what="delivery id" />
      </dd>
      <dt>Event</dt>
      <dd>
        <EllipsizedId id={d.eventId} what="event id" />
      </dd>
    </>
  );
}

function DeliveryItem({ delivery: d, onResent }: { delivery: Delivery; onResent: () => void }) {
  const [state, resend] = useResendDelivery();
  const titleId = `delivery-${d.id}`;
  const label = chaosLabel(d);
  return (
    <li className="card delivery" data-delivery-id={d.id}>
      <h3 id={titleId}>
        <code>{eventTypeName(d.eventType)}</code> <DeliveryOutcome delivery={d} />
        {label && (
          <>
            {' '}
            <span className="badge tone-wait" data-chaos={d.chaos}>
              {label}
            </span>
          </>
        )}
      </h3>
      <DeliveryWhy delivery={d} />
      <dl className="facts">
        <DeliveryIdFacts delivery={d} />
        <dt>Endpoint</dt>
        <dd>
          <EllipsizedId id={d.endpointId} what="endpoint id" />
        </dd>
        <dt>Attempts</dt>
        <dd data-testid="delivery-attempts">{d.attempts}</dd>
        <dt>Last status</dt>
        <dd>{statusText(d.lastStatus)}</dd>
        <dt>Last attempt</dt>
        <dd>
          <Time iso={d.lastAttemptAt} clock="sandbox" />
          {d.lastMs != null && ` (${formatMs(d.lastMs)})`}
        </dd>
      </dl>
      {/* What was sent is long (a whole event): folded, so that a phone shows the deliveries rather than one body. */}
      <details className="sent">
        <summary>What was sent</summary>
        <h4>Signature header</h4>
        <pre className="bytes" data-testid="signature-header">{d.signatureHeader ?? ''}</pre>
        {d.signatureHeader && <CopyButton value={d.signatureHeader} what="signature header" />}
        <h4>Request body</h4>
        {d.requestBody ? <SignedBody body={d.requestBody} testId="request-body" /> : <pre className="bytes" data-testid="request-body" />}
      </details>
      <ResendButton delivery={d} resend={resend} fetching={state.fetching} describedBy={titleId} onResent={onResent} />
      <ErrorAlert error={state.error} />
    </li>
  );
}
