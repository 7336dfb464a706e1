import { useState } from 'react';
import { gql, useSubscription } from 'urql';
import { ErrorAlert, useLiveQuery } from '../graphql';
import { eventTypeName, formatTime } from '../format';
import { Page } from '../ui';

interface EventRow {
  id: string;
  type: string;
  createdAt: string;
  data: unknown;
}

const EVENTS = gql`
  query DashboardEvents {
    events(first: 50) {
      nodes {
        id
        type
        createdAt
        data
      }
    }
  }
`;

const LIVE = gql`
  subscription DashboardLiveEvents {
    events {
      id
      type
      createdAt
      data
    }
  }
`;

/** The account's events, newest first; new ones are added as they are stored. */
export function Events() {
  const [result] = useLiveQuery<{ events: { nodes: EventRow[] } }>({ query: EVENTS });
  const [arrived, setArrived] = useState<EventRow[]>([]);
  const [live] = useSubscription({ query: LIVE }, (_prev: unknown, data: any) => {
    setArrived((a) => [data.events, ...a].slice(0, 50));
    return data;
  });
  const seen = new Set<string>();
  const rows = [...arrived, ...(result.data?.events.nodes ?? [])].filter((e) => !seen.has(e.id) && seen.add(e.id)).slice(0, 50);
  return (
    <Page title="Events">
      <ErrorAlert error={result.error ?? live.error} />
      <ol className="plain events" aria-label="Events">
        {rows.map((e) => (
          <li key={e.id} className="card">
            <code>{eventTypeName(e.type)}</code> <span className="muted">{formatTime(e.createdAt)} · {e.id}</span>
            <details>
              <summary>Data</summary>
              <pre className="bytes">{JSON.stringify(e.data, null, 2)}</pre>
            </details>
          </li>
        ))}
      </ol>
      {result.data && rows.length === 0 && <p className="muted">No events yet.</p>}
    </Page>
  );
}
