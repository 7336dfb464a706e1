import { useState } from 'react';
import { BASE, Link } from '../router';
import { useWebhookEndpoints } from '../hooks/webhooks';
import { CreateButton } from '../components/SidePanel';
import { EmptyState } from '../components/EmptyState';
import { Page } from '../ui';
import { EndpointForm, type MadeEndpoint } from './webhooks/EndpointForm';
import { endpointTitle, MODE_WORDS, successText } from './webhooks/endpointWords';
import { LoadFailed } from './webhooks/LoadFailed';
import { SecretOnce } from './webhooks/SecretOnce';
import './webhooks/webhooks.css';

export const endpointPath = (id: string) => `${BASE}/webhooks/${encodeURIComponent(id)}`;

/** The endpoints as a table, one row each; a row's name opens the endpoint's page (settings, chaos, deliveries). */
export function Webhooks() {
  const [result, refetch] = useWebhookEndpoints();
  // The secret of the endpoint made here; it goes with the view, and is shown only while that endpoint is listed.
  const [made, setMade] = useState<MadeEndpoint | null>(null);
  const endpoints = result.data?.webhookEndpoints;
  const madeListed = made?.secret && endpoints?.some((e) => e.id === made.id);

  return (
    <Page title="Webhooks">
      <div className="list-head">
        <p className="muted">Where the gateway sends your events, and how that went over the last 24 hours.</p>
        <CreateButton label="New endpoint">
          {(close) => (
            <EndpointForm
              onMade={(m) => {
                setMade(m);
                close();
                refetch({ requestPolicy: 'network-only' });
              }}
            />
          )}
        </CreateButton>
      </div>
      {madeListed && made.secret && <SecretOnce secret={made.secret} title={made.title} />}
      <LoadFailed what="the endpoints" error={result.error} onRetry={() => refetch({ requestPolicy: 'network-only' })} />
      {!result.error && endpoints?.length === 0 && (
        <EmptyState title="No endpoints yet">
          Add the URL where your server receives events (the gateway signs each delivery with the endpoint's secret), or a pull endpoint if your server cannot receive inbound HTTP.
        </EmptyState>
      )}
      {!result.error && endpoints && endpoints.length > 0 && (
        <table className="data endpoints-table">
          <caption>Webhook endpoints</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Mode</th>
              <th scope="col" className="wide-only">
                URL
              </th>
              <th scope="col">State</th>
              <th scope="col">Success, 24 h</th>
            </tr>
          </thead>
          <tbody>
            {endpoints.map((e) => {
              const success = successText(e.recentSuccess);
              return (
                <tr key={e.id} data-endpoint-id={e.id} data-mode={e.mode}>
                  <th scope="row">
                    <Link href={endpointPath(e.id)} className="endpoint-name">
                      {endpointTitle(e)}
                    </Link>
                    {e.description && <span className="muted endpoint-description">{e.description}</span>}
                  </th>
                  <td>
                    <span className="badge tone-info" data-mode={e.mode}>
                      {MODE_WORDS[e.mode].word}
                    </span>
                  </td>
                  <td className="wide-only break">{e.url ?? <span className="muted">none (pulled)</span>}</td>
                  <td data-testid="endpoint-state">
                    <span className="badge tone-ok">Enabled</span>
                    {e.chaos?.enabled && <span className="badge tone-wait">Chaos on</span>}
                  </td>
                  <td data-testid="endpoint-success">
                    {success.rate}
                    <span className="muted success-detail">{success.detail}</span>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </Page>
  );
}
