import { gql } from 'urql';
import { ErrorAlert, useLiveQuery } from '../graphql';
import { formatTime } from '../format';
import { Page } from '../ui';

interface LogEntry {
  requestId: string;
  method: string;
  path: string;
  status: number;
  errorCode: string | null;
  latencyMs: number;
  createdAt: string;
}

const LOGS = gql`
  query DashboardLogs {
    logs(first: 50) {
      requestId
      method
      path
      status
      errorCode
      latencyMs
      createdAt
    }
  }
`;

/** Requests made with the signed-in key, newest first (GET /logs). */
export function Logs() {
  const [result, refetch] = useLiveQuery<{ logs: LogEntry[] }>({ query: LOGS });
  return (
    <Page title="Logs">
      <p className="muted">Requests made with the key you signed in with (its requests through this dashboard included), newest first.</p>
      <button type="button" onClick={() => refetch({ requestPolicy: 'network-only' })}>
        Refresh
      </button>
      <ErrorAlert error={result.error} />
      <table className="data">
        <caption>Logs</caption>
        <thead>
          <tr>
            <th scope="col">Request</th>
            <th scope="col">Status</th>
            <th scope="col">Time</th>
          </tr>
        </thead>
        <tbody>
          {result.data?.logs.map((l) => (
            <tr key={l.requestId}>
              <th scope="row" className="break">
                {l.method} {l.path}
                <div className="muted">{l.requestId}</div>
              </th>
              <td>
                {l.status}
                {l.errorCode && <div className="muted">{l.errorCode}</div>}
              </td>
              <td>
                {formatTime(l.createdAt)}
                <div className="muted">{l.latencyMs} ms</div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Page>
  );
}
