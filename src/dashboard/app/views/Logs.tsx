import { useState } from 'react';
import type { LogSource, LogStatusClass } from '../../../../generated/dashboard/documents';
import { formatMs } from '../format';
import { useLogs, type LogEntry, type LogFilter } from '../hooks/logs';
import { useListPage } from '../hooks/urlFilters';
import { BASE, Link } from '../router';
import { EllipsizedId } from '../components/EllipsizedId';
import { SidePanel } from '../components/SidePanel';
import { ClockNamed, ClockNote, Time } from '../components/Time';
import { prettyJson } from '../components/JsonBody';
import { Page } from '../ui';
import { ListStatus, SelectFilter, TextFilter } from './lists/ListParts';

const KEYS = ['method', 'status', 'path', 'source'] as const;
const METHODS = ['GET', 'POST', 'PUT', 'DELETE'].map((m) => [m, m] as const);
/** The URL's words for the status classes and sources, and what the API calls them. */
const STATUS: ReadonlyArray<readonly [string, string, LogStatusClass]> = [
  ['2xx', '2xx succeeded', 'SUCCESS_2XX'],
  ['4xx', '4xx refused', 'CLIENT_ERROR_4XX'],
  ['5xx', '5xx failed', 'SERVER_ERROR_5XX'],
];
const SOURCES: ReadonlyArray<readonly [string, string, LogSource | null]> = [
  ['', 'API', 'API'],
  ['dashboard', 'Dashboard', 'DASHBOARD'],
  ['all', 'Both', null],
];

/**
 * Requests made with the signed-in key, newest first, each with its bodies as the gateway recorded them
 * (secrets redacted). Filters by method, status class, path and source live in the URL. By default only
 * the integration's requests: the dashboard's own are this page's reads. New requests appear as events
 * arrive (see hooks/logs.ts).
 */
export function Logs() {
  const list = useListPage(`${BASE}/logs`, KEYS);
  const f = list.page.filters;
  const status = STATUS.find(([k]) => k === f.status);
  const source = SOURCES.find(([k]) => k === f.source) ?? SOURCES[0]!;
  const filter: LogFilter = {
    method: f.method || null,
    statusClass: status?.[2] ?? null,
    pathPrefix: f.path || null,
    source: source[2],
  };
  const { result, live, refresh } = useLogs(filter);
  const [shown, setShown] = useState<LogEntry | null>(null);
  const logs = result.data?.logs;
  const narrowed = Boolean(f.method || f.status || f.path);

  return (
    <Page title="Logs">
      <div className="list-head">
        <p className="muted">The last 50 requests made with the key you signed in with, newest first. Times are real time: logs record real requests.</p>
        <button type="button" className="secondary" onClick={refresh}>
          Refresh
        </button>
      </div>
      <div className="list-filters">
        <SelectFilter label="Method" value={f.method} options={METHODS} any="Any method" onChange={(v) => list.setFilters({ method: v })} />
        <SelectFilter label="Status" value={status?.[0] ?? ''} options={STATUS.map(([k, text]) => [k, text] as const)} any="Any status" onChange={(v) => list.setFilters({ status: v })} />
        <TextFilter key={f.path} label="Path" value={f.path} placeholder="/v1/payment_intents" onChange={(v) => list.setFilters({ path: v })} />
        <SelectFilter label="Source" value={source[0]} options={SOURCES.map(([k, text]) => [k, text] as const)} any={null} onChange={(v) => list.setFilters({ source: v })} />
      </div>
      <ListStatus what="logs" error={result.error ?? live.error} loaded={Boolean(logs)} empty={logs?.length === 0} emptyTitle={narrowed ? 'No request matches' : 'No requests yet'}>
        {narrowed ? (
          <>
            No request of the last 50 matches these filters. <Link href={`${BASE}/logs`}>Show all requests</Link>.
          </>
        ) : (
          <>Requests your integration makes with this key appear here as they happen{source[2] === 'API' ? ' (choose “Dashboard” under Source to see this dashboard’s own)' : ''}.</>
        )}
      </ListStatus>
      {!result.error && logs && logs.length > 0 && (
        <ClockNamed>
          {/* The clock is named once, in the time column's header, not on every row. */}
          <table className="data compact logs-table" aria-label="Logs">
            <thead>
              <tr>
                <th scope="col" className="col-status">
                  Status
                </th>
                <th scope="col">Request</th>
                <th scope="col" className="wide-only col-source">
                  Source
                </th>
                <th scope="col" className="wide-only col-latency">
                  Took
                </th>
                <th scope="col" className="wide-only col-time">
                  Time
                  <ClockNote clock="real" />
                </th>
              </tr>
            </thead>
            <tbody>
              {logs.map((l) => (
                <tr key={l.requestId} data-request-id={l.requestId} data-source={l.source}>
                  <td>
                    <span className={`badge tone-${statusTone(l.status)}`}>{l.status}</span>
                  </td>
                  <th scope="row">
                    <button type="button" className="row-open mono" onClick={() => setShown(l)} title={`${l.method} ${l.path}`}>
                      {l.method} {l.path}
                    </button>
                    {/* A second line on phones only, where the time has no column; the source only when it is the dashboard. */}
                    <span className="cell-sub narrow-time">
                      <Time iso={l.createdAt} clock="real" />
                      {l.source === 'DASHBOARD' && ' · from this dashboard'}
                    </span>
                  </th>
                  <td className="wide-only cell-clip">{l.source === 'DASHBOARD' ? 'Dashboard' : 'API'}</td>
                  <td className="wide-only num">{formatMs(l.latencyMs)}</td>
                  <td className="wide-only">
                    <Time iso={l.createdAt} clock="real" />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ClockNamed>
      )}
      {shown && (
        <SidePanel title={`${shown.method} ${shown.path}`} onClose={() => setShown(null)}>
          <LogDetail entry={shown} />
        </SidePanel>
      )}
    </Page>
  );
}

/** 2xx ok, 4xx the caller's mistake, 5xx the gateway's: the colour only helps, the number says it. */
const statusTone = (status: number) => (status < 400 ? 'ok' : status < 500 ? 'wait' : 'bad');

function LogDetail({ entry: l }: { entry: LogEntry }) {
  return (
    <div className="log-detail">
      <dl className="facts">
        <dt>Status</dt>
        <dd>
          {l.status}
          {l.errorCode && <> · {l.errorCode}</>}
        </dd>
        <dt>Time</dt>
        <dd>
          <Time iso={l.createdAt} clock="real" />
        </dd>
        <dt>Took</dt>
        <dd>{formatMs(l.latencyMs)}</dd>
        <dt>Source</dt>
        <dd>{l.source === 'DASHBOARD' ? 'This dashboard' : 'API'}</dd>
        <dt>Request</dt>
        <dd>
          <EllipsizedId id={l.requestId} what="request id" />
        </dd>
      </dl>
      <Body title="Request body" body={l.requestBody} />
      <Body title="Response body" body={l.responseBody} />
    </div>
  );
}

function Body({ title, body }: { title: string; body: string | null }) {
  return (
    <section aria-label={title}>
      <h3>{title}</h3>
      {body == null ? <p className="muted">None</p> : <pre className="bytes">{prettyJson(body)}</pre>}
    </section>
  );
}

