import { useState } from 'react';
import { ErrorAlert } from '../graphql';
import { formatMs } from '../format';
import { useLogs, type LogEntry } from '../hooks/logs';
import { EllipsizedId } from '../components/EllipsizedId';
import { EmptyState } from '../components/EmptyState';
import { Time } from '../components/Time';
import { Page } from '../ui';

/**
 * Requests made with the signed-in key, newest first (GET /logs), each with its bodies as the gateway
 * recorded them (secrets redacted). The dashboard's own requests are hidden unless asked for: they are
 * this page's reads, not what an integration sent.
 */
export function Logs() {
  const [includeDashboard, setIncludeDashboard] = useState(false);
  const [result, refetch] = useLogs(includeDashboard);
  const logs = result.data?.logs;
  return (
    <Page title="Logs">
      <p className="muted">Requests made with the key you signed in with, newest first. Times are real time: logs record real requests.</p>
      <div className="toolbar">
        <label className="check">
          <input type="checkbox" checked={includeDashboard} onChange={(e) => setIncludeDashboard(e.target.checked)} /> Show dashboard requests
        </label>
        <button type="button" onClick={() => refetch({ requestPolicy: 'network-only' })}>
          Refresh
        </button>
      </div>
      <ErrorAlert error={result.error} />
      {logs?.length === 0 && (
        <EmptyState title="No requests yet">
          Requests your integration makes with this key appear here{includeDashboard ? '' : ' (tick "Show dashboard requests" to see this dashboard’s own)'}.
        </EmptyState>
      )}
      {logs && logs.length > 0 && (
        <ol className="plain" aria-label="Logs">
          {logs.map((l) => (
            <LogItem key={l.requestId} entry={l} />
          ))}
        </ol>
      )}
    </Page>
  );
}

/** 2xx ok, 4xx the caller's mistake, 5xx the gateway's: the colour only helps, the number says it. */
const statusTone = (status: number) => (status < 400 ? 'ok' : status < 500 ? 'wait' : 'bad');

function LogItem({ entry: l }: { entry: LogEntry }) {
  return (
    <li className="card log" data-request-id={l.requestId} data-source={l.source}>
      <p className="log-line">
        <span className={`badge tone-${statusTone(l.status)}`}>{l.status}</span> <code className="break">
          {l.method} {l.path}
        </code>
      </p>
      <p className="muted">
        {formatMs(l.latencyMs)} · <Time iso={l.createdAt} clock="real" />
        {l.source === 'DASHBOARD' && ' · from this dashboard'}
        {l.errorCode && <> · {l.errorCode}</>}
      </p>
      <EllipsizedId id={l.requestId} what="request id" />
      <Body title="Request body" body={l.requestBody} />
      <Body title="Response body" body={l.responseBody} />
    </li>
  );
}

function Body({ title, body }: { title: string; body: string | null }) {
  if (body == null) return <p className="muted">{title}: none</p>;
  return (
    <details>
      <summary>{title}</summary>
      <pre className="bytes">{pretty(body)}</pre>
    </details>
  );
}

/** JSON indented for reading; a body cut at 4 KiB (ending in "…") is not JSON any more and is shown as it is. */
function pretty(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}
