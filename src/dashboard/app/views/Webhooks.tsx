import { useState, type FormEvent } from 'react';
import { ErrorAlert } from '../graphql';
import { eventTypeName } from '../format';
import {
  useCreateEndpoint,
  useDeleteEndpoint,
  useDeliveriesInState,
  useRotateSecret,
  useSendTestPing,
  useWebhookEndpoints,
  type WebhookDeliveryState,
  type WebhookEndpoint,
} from '../hooks/webhooks';
import { ConfirmButton } from '../components/ConfirmDialog';
import { CopyButton } from '../components/CopyButton';
import { EllipsizedId } from '../components/EllipsizedId';
import { EmptyState } from '../components/EmptyState';
import { statusWords } from '../components/StatusBadge';
import { Time } from '../components/Time';
import { Page } from '../ui';
import { DeliveryList } from './Deliveries';

const STATES: WebhookDeliveryState[] = ['PENDING', 'RETRYING', 'DELIVERED', 'DEAD_LETTER'];

/** A signing secret is shown once, where it was made (creation or rotation): the gateway keeps it encrypted. */
function SecretOnce({ secret, what }: { secret: string; what: string }) {
  return (
    <div className="notice">
      <p>
        {what} signing secret (shown once): <code className="break">{secret}</code>
      </p>
      <CopyButton value={secret} what="signing secret" />
    </div>
  );
}

/** An endpoint's event filter as the contract spells the types ("*" is every type). */
const eventsText = (events: string[]) => events.map((e) => (e === '*' ? 'all events' : e.includes('.') ? e : eventTypeName(e))).join(', ');

export function Webhooks() {
  const [result, refetch] = useWebhookEndpoints();
  const [createState, create] = useCreateEndpoint();
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState('*');
  const [secret, setSecret] = useState<{ secret: string; what: string } | null>(null);
  const reload = () => refetch({ requestPolicy: 'network-only' });

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const list = events.split(',').map((s) => s.trim()).filter(Boolean);
    const res = await create({ input: { url: url.trim(), events: list.length ? list : ['*'] } });
    const made = res.data?.createWebhookEndpoint;
    if (made) {
      if (made.secret) setSecret({ secret: made.secret, what: `${made.url}:` });
      setUrl('');
      reload();
    }
  };

  return (
    <Page title="Webhooks">
      <form className="card" aria-labelledby="new-endpoint-title" onSubmit={submit}>
        <h2 id="new-endpoint-title">New endpoint</h2>
        <div className="fields">
          <label>
            Endpoint URL
            <input type="url" value={url} onChange={(e) => setUrl(e.target.value)} required placeholder="https://shop.example/webhooks" />
          </label>
          <label>
            Events (comma separated, * for all)
            <input value={events} onChange={(e) => setEvents(e.target.value)} />
          </label>
        </div>
        <button type="submit" disabled={createState.fetching}>
          Create endpoint
        </button>
        <ErrorAlert error={createState.error} />
      </form>
      {secret && <SecretOnce {...secret} />}
      <ErrorAlert error={result.error} />
      {result.data?.webhookEndpoints.length === 0 && (
        <EmptyState title="No endpoints yet">Add the URL where your server receives events; the gateway signs each delivery with the endpoint's secret.</EmptyState>
      )}
      {result.data?.webhookEndpoints.map((endpoint) => (
        <EndpointCard key={endpoint.id} endpoint={endpoint} onChanged={reload} onSecret={(s) => setSecret({ secret: s, what: `${endpoint.url} (new):` })} />
      ))}
    </Page>
  );
}

function EndpointCard({ endpoint, onChanged, onSecret }: { endpoint: WebhookEndpoint; onChanged: () => void; onSecret: (secret: string) => void }) {
  const [pingState, ping] = useSendTestPing();
  const [rotateState, rotate] = useRotateSecret();
  const [, remove] = useDeleteEndpoint();
  const [state, setState] = useState<WebhookDeliveryState | null>(null);
  const titleId = `endpoint-${endpoint.id}`;
  const [inState, refetchInState] = useDeliveriesInState(endpoint.id, state);
  const deliveries = state ? (inState.data?.webhookEndpoint?.deliveries ?? []) : endpoint.deliveries;
  const changed = () => {
    onChanged();
    if (state) refetchInState({ requestPolicy: 'network-only' });
  };
  const deleteEndpoint = async () => {
    const res = await remove({ id: endpoint.id });
    if (res.error) throw new Error(res.error.message);
    onChanged();
  };
  return (
    <section className="card" aria-labelledby={titleId}>
      <h2 id={titleId} className="break">
        {endpoint.url ?? 'pull endpoint (no URL: events wait to be pulled)'}
      </h2>
      <EllipsizedId id={endpoint.id} what="endpoint id" />
      <p className="muted">
        {eventsText(endpoint.events)} · created <Time iso={endpoint.createdAt} clock="sandbox" />
      </p>
      <div className="actions">
        <button type="button" disabled={pingState.fetching} onClick={() => ping({ id: endpoint.id }).then((r) => !r.error && setTimeout(onChanged, 1000))}>
          Send test ping
        </button>
        <button type="button" disabled={rotateState.fetching} onClick={() => rotate({ id: endpoint.id }).then((r) => r.data?.rotateWebhookSecret.secret && onSecret(r.data.rotateWebhookSecret.secret))}>
          Rotate secret
        </button>
        <ConfirmButton
          title="Delete this endpoint?"
          description={
            <p>
              <span className="break">{endpoint.url}</span> stops receiving events, and its pending retries are cancelled. Its past deliveries are no longer listed here.
            </p>
          }
          confirmLabel="Delete endpoint"
          action={deleteEndpoint}
        >
          Delete endpoint
        </ConfirmButton>
      </div>
      <ErrorAlert error={pingState.error ?? rotateState.error} />
      <h3>Deliveries</h3>
      <label>
        Delivery state
        <select value={state ?? ''} onChange={(e) => setState((e.target.value || null) as WebhookDeliveryState | null)}>
          <option value="">All states</option>
          {STATES.map((s) => (
            <option key={s} value={s}>
              {statusWords(s, 'delivery')}
            </option>
          ))}
        </select>
      </label>
      <ErrorAlert error={inState.error} />
      <DeliveryList deliveries={deliveries} onResent={changed} empty={state ? `No deliveries in “${statusWords(state, 'delivery')}”` : 'No deliveries yet'} />
    </section>
  );
}
