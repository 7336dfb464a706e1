import { eventTypeName } from '../../format';
import type { Delivery } from '../../hooks/deliveries';
import type { EventType, WebhookDeliveryState } from '../../hooks/webhooks';
import { EllipsizedId } from '../../components/EllipsizedId';
import { statusWords } from '../../components/StatusBadge';
import { Time } from '../../components/Time';
import { chaosLabel, DeliveryOutcome } from './deliveryWords';

export const DELIVERY_STATES: WebhookDeliveryState[] = ['PENDING', 'RETRYING', 'DELIVERED', 'DEAD_LETTER'];
/** Every event type, in the schema's order, for the filter. */
export const EVENT_TYPES: EventType[] = [
  'PAYMENT_CREATED',
  'PAYMENT_SUCCEEDED',
  'PAYMENT_FAILED',
  'PAYMENT_UNKNOWN',
  'PAYMENT_RECONCILED',
  'PAYMENT_EXPIRED',
  'PAYMENT_CANCELLED',
  'REFERENCE_PAID',
  'REFUND_SUCCEEDED',
  'CHECKOUT_SESSION_COMPLETED',
  'TEST_PING',
];

/** The state and event-type filters of the deliveries table (their values live in the URL). */
export function DeliveryFilters({ state, type, onChange }: { state: string; type: string; onChange: (patch: { state?: string; type?: string }) => void }) {
  return (
    <div className="filters delivery-filters">
      <label>
        Delivery state
        <select value={state} onChange={(e) => onChange({ state: e.target.value })}>
          <option value="">All states</option>
          {DELIVERY_STATES.map((s) => (
            <option key={s} value={s}>
              {statusWords(s, 'delivery')}
            </option>
          ))}
        </select>
      </label>
      <label>
        Event type
        <select value={type} onChange={(e) => onChange({ type: e.target.value })}>
          <option value="">All types</option>
          {EVENT_TYPES.map((t) => (
            <option key={t} value={t}>
              {eventTypeName(t)}
            </option>
          ))}
        </select>
      </label>
    </div>
  );
}

/** An endpoint's deliveries, one row each; the event type opens the delivery's detail pane. */
export function DeliveryTable({ deliveries, onOpen }: { deliveries: Delivery[]; onOpen: (id: string) => void }) {
  return (
    <table className="data deliveries-table">
      {/* Named for assistive technology; the section's heading shows the same word. */}
      <caption className="visually-hidden">Deliveries</caption>
      <thead>
        <tr>
          <th scope="col">Event</th>
          <th scope="col">State</th>
          <th scope="col">Attempts</th>
          <th scope="col" className="wide-only">
            Event id
          </th>
          <th scope="col" className="wide-only">
            Last attempt
          </th>
        </tr>
      </thead>
      <tbody>
        {deliveries.map((d) => {
          const label = chaosLabel(d);
          return (
            <tr key={d.id} data-delivery-id={d.id} data-chaos={d.chaos ?? undefined}>
              <th scope="row">
                <button type="button" className="link-button" onClick={() => onOpen(d.id)}>
                  {eventTypeName(d.eventType)}
                </button>
                {label && <span className="chaos-label">{label}</span>}
              </th>
              <td>
                <DeliveryOutcome delivery={d} />
              </td>
              <td data-testid="delivery-attempts">{d.attempts}</td>
              <td className="wide-only">
                <EllipsizedId id={d.eventId} what="event id" />
              </td>
              <td className="wide-only">
                <Time iso={d.lastAttemptAt} clock="sandbox" />
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
