import { ErrorAlert } from '../../graphql';
import { eventTypeName } from '../../format';
import { PENDING_PAGE, useAckEvents } from '../../hooks/webhooks';
import { EllipsizedId } from '../../components/EllipsizedId';
import { EmptyState } from '../../components/EmptyState';
import { Time } from '../../components/Time';

export interface PendingEvent {
  id: string;
  type: string;
  createdAt: string;
}

/** The REST routes a merchant's server pulls and acknowledges with (docs/webhooks.md, "Pull endpoints"). */
export const pendingRoute = (endpointId: string) => `GET /v1/webhook_endpoints/${endpointId}/pending?limit=${PENDING_PAGE}`;
const ackRoute = (endpointId: string) => `POST /v1/webhook_endpoints/${endpointId}/pending/ack`;

/**
 * A pull endpoint's unacknowledged events, oldest first, as its first page over REST shows them, each
 * with "Ack" (what the merchant's server does once it handled one). `events` may hold one more than
 * the page: it only says that more wait.
 */
export function PendingEventList({ endpointId, events, onRefresh, refreshing }: { endpointId: string; events: PendingEvent[] | undefined; onRefresh: () => void; refreshing: boolean }) {
  const [ackState, ack] = useAckEvents();
  const shown = events?.slice(0, PENDING_PAGE) ?? [];
  const more = (events?.length ?? 0) > PENDING_PAGE;
  return (
    <>
      <div className="toolbar">
        <p className="muted grow">Not acknowledged yet, oldest first.</p>
        <button type="button" className="secondary" disabled={refreshing} onClick={onRefresh}>
          Refresh
        </button>
      </div>
      {events && shown.length === 0 ? (
        <EmptyState title="No pending events">
          <p>
            Events wait here until your server fetches them with <code className="break">{pendingRoute(endpointId)}</code> and acknowledges the ones it handled with{' '}
            <code className="break">{ackRoute(endpointId)}</code> (<code>{'{"ids": ["evt_…"]}'}</code>). Try “Send test ping”.
          </p>
        </EmptyState>
      ) : (
        <ol className="plain pending-events" aria-label="Pending events">
          {shown.map((e) => (
            <li key={e.id} className="pending-event" data-event-id={e.id}>
              <div className="grow">
                <code className="event-type">{eventTypeName(e.type)}</code>{' '}
                <span className="muted">
                  <Time iso={e.createdAt} clock="sandbox" />
                </span>
                <EllipsizedId id={e.id} what="event id" />
              </div>
              <button
                type="button"
                className="secondary"
                aria-label={`Ack ${eventTypeName(e.type)} ${e.id}`}
                disabled={ackState.fetching}
                onClick={() => ack({ endpointId, ids: [e.id] }).then((r) => !r.error && onRefresh())}
              >
                Ack
              </button>
            </li>
          ))}
        </ol>
      )}
      <ErrorAlert error={ackState.error} />
      {more && (
        <p className="muted">
          More events wait: these are the oldest {PENDING_PAGE}. Once your server acknowledges them (<code className="break">{ackRoute(endpointId)}</code>), the next ones show.
        </p>
      )}
    </>
  );
}
