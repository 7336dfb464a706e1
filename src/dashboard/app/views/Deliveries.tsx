import { gql, useMutation } from 'urql';
import { ErrorAlert } from '../graphql';
import { eventTypeName, formatTime } from '../format';
import { StatusBadge } from '../ui';

export interface Delivery {
  id: string;
  eventId: string;
  eventType: string;
  state: string;
  attempts: number;
  lastStatus: number | null;
  lastMs: number | null;
  lastAttemptAt: string | null;
  requestBody: string | null;
  signatureHeader: string | null;
  endpointId: string;
}

/** What a delivery shows, wherever it is listed. */
export const DELIVERY_FIELDS = gql`
  fragment DeliveryFields on WebhookDelivery {
    id
    endpointId
    eventId
    eventType
    state
    attempts
    lastStatus
    lastMs
    lastAttemptAt
    requestBody
    signatureHeader
  }
`;

const RESEND = gql`
  mutation DashboardResend($endpointId: ID!, $deliveryId: ID!) {
    retryWebhookDelivery(endpointId: $endpointId, deliveryId: $deliveryId) {
      id
      state
      attempts
    }
  }
`;

/** Deliveries with what was sent byte for byte (body and Service-Signature) and a "Resend" each. */
export function DeliveryList({ deliveries, onResent, empty }: { deliveries: Delivery[]; onResent: () => void; empty: string }) {
  if (deliveries.length === 0) return <p className="muted">{empty}</p>;
  return (
    <ul className="deliveries plain">
      {deliveries.map((d) => (
        <DeliveryItem key={d.id} delivery={d} onResent={onResent} />
      ))}
    </ul>
  );
}

function DeliveryItem({ delivery: d, onResent }: { delivery: Delivery; onResent: () => void }) {
  const [state, resend] = useMutation(RESEND);
  const titleId = `delivery-${d.id}`;
  return (
    <li className="card delivery" data-delivery-id={d.id}>
      <h3 id={titleId}>
        <code>{eventTypeName(d.eventType)}</code> <span className="muted">{d.id}</span>
      </h3>
      <dl className="facts">
        <dt>Event</dt>
        <dd className="break">{d.eventId}</dd>
        <dt>Endpoint</dt>
        <dd className="break">{d.endpointId}</dd>
        <dt>State</dt>
        <dd>
          <StatusBadge status={d.state} />
        </dd>
        <dt>Attempts</dt>
        <dd data-testid="delivery-attempts">{d.attempts}</dd>
        <dt>Last status</dt>
        <dd>{d.lastStatus == null ? '—' : d.lastStatus === 0 ? '0 (no response)' : d.lastStatus}</dd>
        <dt>Last attempt</dt>
        <dd>
          {formatTime(d.lastAttemptAt)}
          {d.lastMs != null && ` (${d.lastMs} ms)`}
        </dd>
        <dt>Signature header</dt>
        <dd>
          <pre className="bytes" data-testid="signature-header">{d.signatureHeader ?? ''}</pre>
        </dd>
        <dt>Request body</dt>
        <dd>
          <pre className="bytes" data-testid="request-body">{d.requestBody ?? ''}</pre>
        </dd>
      </dl>
      <button type="button" disabled={state.fetching} aria-describedby={titleId} onClick={() => resend({ endpointId: d.endpointId, deliveryId: d.id }).then((r) => !r.error && onResent())}>
        Resend
      </button>
      <ErrorAlert error={state.error} />
    </li>
  );
}
