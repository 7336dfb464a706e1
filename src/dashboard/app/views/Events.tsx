import { useState } from 'react';
import { ErrorAlert } from '../graphql';
import { eventTypeName } from '../format';
import { useEvents, useLiveEvents, type EventRow } from '../hooks/events';
import { EllipsizedId } from '../components/EllipsizedId';
import { EmptyState } from '../components/EmptyState';
import { Time } from '../components/Time';
import { Page } from '../ui';

/** The account's events, newest first; new ones are added as they are stored. */
export function Events() {
  const [result] = useEvents();
  const [arrived, setArrived] = useState<EventRow[]>([]);
  const [live] = useLiveEvents((event) => setArrived((a) => [event, ...a].slice(0, 50)));
  const seen = new Set<string>();
  const rows = [...arrived, ...(result.data?.events.nodes ?? [])].filter((e) => !seen.has(e.id) && seen.add(e.id)).slice(0, 50);
  return (
    <Page title="Events">
      <p className="muted">Every event of the account as webhooks carry it, newest first. New ones appear as they happen.</p>
      <ErrorAlert error={result.error ?? live.error} />
      {result.data && rows.length === 0 ? (
        <EmptyState title="No events yet">Events appear when a payment is created or changes state, when a refund completes, or when you send a test ping from Webhooks.</EmptyState>
      ) : (
        <ol className="plain events" aria-label="Events">
          {rows.map((e) => (
            <li key={e.id} className="card">
              <code className="event-type">{eventTypeName(e.type)}</code> <span className="muted">
                <Time iso={e.createdAt} clock="sandbox" />
              </span>
              <EllipsizedId id={e.id} what="event id" />
              <details>
                <summary>Data</summary>
                <pre className="bytes">{JSON.stringify(e.data, null, 2)}</pre>
              </details>
            </li>
          ))}
        </ol>
      )}
    </Page>
  );
}
