import { useState, type FormEvent } from 'react';
import { ErrorAlert } from '../graphql';
import { eventTypeName } from '../format';
import {
  useClearChaos,
  useCreateEndpoint,
  useDeleteEndpoint,
  useDeliveriesInState,
  usePendingEvents,
  useRotateSecret,
  useSendTestPing,
  useWebhookEndpoints,
  type Chaos,
  type WebhookDeliveryState,
  type WebhookEndpoint,
  type WebhookEndpointMode,
} from '../hooks/webhooks';
import { ConfirmButton } from '../components/ConfirmDialog';
import { CopyButton } from '../components/CopyButton';
import { EllipsizedId } from '../components/EllipsizedId';
import { EmptyState } from '../components/EmptyState';
import { statusWords } from '../components/StatusBadge';
import { Time } from '../components/Time';
import { Page } from '../ui';
import { DeliveryList } from './Deliveries';
import { ChaosReport, ChaosSettings, chaosRoute } from './webhooks/Chaos';
import { PendingEventList } from './webhooks/PendingEvents';

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

/** What a card is called: a push endpoint by its URL, a pull endpoint (no URL) by its name. */
const endpointTitle = (e: { url?: string | null; name?: string | null; mode: WebhookEndpointMode }) => (e.mode === 'PULL' ? e.name || 'Pull endpoint' : (e.url ?? e.name ?? 'Endpoint'));

const MODE_WORDS: Record<WebhookEndpointMode, { word: string; how: string }> = {
  PUSH: { word: 'Push', how: 'the gateway POSTs each event to the URL' },
  PULL: { word: 'Pull', how: 'events wait until your server fetches and acknowledges them' },
};

export function Webhooks() {
  const [result, refetch] = useWebhookEndpoints();
  const [createState, create] = useCreateEndpoint();
  const [mode, setMode] = useState<WebhookEndpointMode>('PUSH');
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState('*');
  const [secret, setSecret] = useState<{ secret: string; what: string } | null>(null);
  const reload = () => refetch({ requestPolicy: 'network-only' });

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const list = events.split(',').map((s) => s.trim()).filter(Boolean);
    const res = await create({ input: { mode, ...(mode === 'PUSH' && { url: url.trim() }), events: list.length ? list : ['*'] } });
    const made = res.data?.createWebhookEndpoint;
    if (made) {
      if (made.secret) setSecret({ secret: made.secret, what: `${made.mode === 'PULL' ? `${endpointTitle(made)} ${made.id}` : made.url}:` });
      setUrl('');
      reload();
    }
  };

  return (
    <Page title="Webhooks">
      <form className="card" aria-labelledby="new-endpoint-title" onSubmit={submit}>
        <h2 id="new-endpoint-title">New endpoint</h2>
        <fieldset>
          <legend>Mode</legend>
          <div className="checks">
            {(['PUSH', 'PULL'] as const).map((m) => (
              <label key={m} className="check">
                <input type="radio" name="endpoint-mode" value={m} checked={mode === m} onChange={() => setMode(m)} /> {MODE_WORDS[m].word}: {MODE_WORDS[m].how}
              </label>
            ))}
          </div>
        </fieldset>
        <div className="fields">
          {/* A pull endpoint has no URL: the gateway refuses one (its server makes no inbound request). */}
          {mode === 'PUSH' && (
            <label>
              Endpoint URL
              <input type="url" value={url} onChange={(e) => setUrl(e.target.value)} required placeholder="https://shop.example/webhooks" />
            </label>
          )}
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
        <EmptyState title="No endpoints yet">
          Add the URL where your server receives events (the gateway signs each delivery with the endpoint's secret), or a pull endpoint if your server cannot receive inbound HTTP.
        </EmptyState>
      )}
      {result.data?.webhookEndpoints.map((endpoint) => (
        <EndpointCard key={endpoint.id} endpoint={endpoint} onChanged={reload} onSecret={(s) => setSecret({ secret: s, what: `${endpointTitle(endpoint)} (new):` })} />
      ))}
    </Page>
  );
}

function EndpointCard({ endpoint, onChanged, onSecret }: { endpoint: WebhookEndpoint; onChanged: () => void; onSecret: (secret: string) => void }) {
  const pull = endpoint.mode === 'PULL';
  const [pingState, ping] = useSendTestPing();
  const [rotateState, rotate] = useRotateSecret();
  const [, remove] = useDeleteEndpoint();
  const [pending, refetchPending] = usePendingEvents(endpoint.id, pull);
  const titleId = `endpoint-${endpoint.id}`;
  const title = endpointTitle(endpoint);
  const refresh = () => {
    onChanged();
    if (pull) refetchPending({ requestPolicy: 'network-only' });
  };
  const deleteEndpoint = async () => {
    const res = await remove({ id: endpoint.id });
    if (res.error) throw new Error(res.error.message);
    onChanged();
  };
  return (
    <section className="card endpoint" aria-labelledby={titleId} data-endpoint-id={endpoint.id} data-mode={endpoint.mode}>
      <h2 id={titleId} className="break">
        {title}
      </h2>
      <EllipsizedId id={endpoint.id} what="endpoint id" />
      <dl className="facts">
        <dt>Mode</dt>
        <dd data-testid="endpoint-mode">
          <span className="badge tone-info" data-mode={endpoint.mode}>
            {MODE_WORDS[endpoint.mode].word}
          </span>{' '}
          <span className="muted">{MODE_WORDS[endpoint.mode].how}</span>
        </dd>
        <dt>Events</dt>
        <dd>{eventsText(endpoint.events)}</dd>
        <dt>Created</dt>
        <dd>
          <Time iso={endpoint.createdAt} clock="sandbox" />
        </dd>
        <dt>Chaos</dt>
        <dd data-testid="endpoint-chaos">
          {pull ? (
            // The gateway refuses chaos on a pull endpoint: nothing is sent to it.
            <span className="muted">not available (nothing is sent to a pull endpoint)</span>
          ) : endpoint.chaos?.enabled ? (
            <span className="badge tone-wait">On</span>
          ) : (
            <>
              Off <span className="muted">(switch it on with <code className="break">{chaosRoute(endpoint.id)}</code>)</span>
            </>
          )}
        </dd>
      </dl>
      <div className="actions">
        {/* A pull endpoint gets the ping too: it waits among its pending events. */}
        <button type="button" disabled={pingState.fetching} onClick={() => ping({ id: endpoint.id }).then((r) => !r.error && setTimeout(refresh, 1000))}>
          Send test ping
        </button>
        {/* Kept for pull endpoints too: the contract gives every endpoint a secret and lets it be rotated. */}
        <button type="button" disabled={rotateState.fetching} onClick={() => rotate({ id: endpoint.id }).then((r) => r.data?.rotateWebhookSecret.secret && onSecret(r.data.rotateWebhookSecret.secret))}>
          Rotate secret
        </button>
        <ConfirmButton
          title="Delete this endpoint?"
          description={
            pull ? (
              <p>
                <span className="break">{title}</span> stops collecting events, and its unacknowledged events are deleted: your server can no longer pull them.
              </p>
            ) : (
              <p>
                <span className="break">{endpoint.url}</span> stops receiving events, and its pending retries are cancelled. Its past deliveries are no longer listed here.
              </p>
            )
          }
          confirmLabel="Delete endpoint"
          action={deleteEndpoint}
        >
          Delete endpoint
        </ConfirmButton>
      </div>
      <ErrorAlert error={pingState.error ?? rotateState.error} />
      {!pull && <EndpointChaos endpointId={endpoint.id} chaos={endpoint.chaos?.enabled ? endpoint.chaos : null} onChanged={onChanged} />}
      {pull ? (
        <>
          <h3>Pending events</h3>
          <ErrorAlert error={pending.error} />
          <PendingEventList
            endpointId={endpoint.id}
            events={pending.data?.webhookEndpoint?.pendingEvents}
            refreshing={pending.fetching}
            onRefresh={() => refetchPending({ requestPolicy: 'network-only' })}
          />
        </>
      ) : (
        <PushDeliveries endpoint={endpoint} onChanged={onChanged} />
      )}
    </section>
  );
}

/** Chaos on a push endpoint: its settings and report while on; once turned off, the report of the run that ended. */
function EndpointChaos({ endpointId, chaos, onChanged }: { endpointId: string; chaos: Chaos | null; onChanged: () => void }) {
  const [clearState, clear] = useClearChaos();
  const [ended, setEnded] = useState<Chaos | null>(null);
  const turnOff = async () => {
    const res = await clear({ id: endpointId });
    if (res.data) {
      setEnded(res.data.clearWebhookChaos);
      onChanged();
    }
  };
  if (!chaos && !ended) return null;
  return (
    <div className="chaos" data-testid="chaos">
      <h3>Chaos</h3>
      {chaos ? (
        <>
          <p className="muted">Each genuine delivery may be duplicated, held back, or preceded by a forged copy your receiver must refuse.</p>
          <ChaosSettings chaos={chaos} />
          <h4>Report</h4>
          <ChaosReport report={chaos.report} label="Chaos report" />
          <button type="button" className="secondary" disabled={clearState.fetching} onClick={turnOff}>
            Turn off chaos
          </button>
        </>
      ) : (
        ended && (
          <>
            <p className="muted">Turned off. What the run did:</p>
            <ChaosReport report={ended.report} label="Chaos report of the run that ended" />
          </>
        )
      )}
      <ErrorAlert error={clearState.error} />
    </div>
  );
}

/** A push endpoint's deliveries, all states or one. */
function PushDeliveries({ endpoint, onChanged }: { endpoint: WebhookEndpoint; onChanged: () => void }) {
  const [state, setState] = useState<WebhookDeliveryState | null>(null);
  const [inState, refetchInState] = useDeliveriesInState(endpoint.id, state);
  const deliveries = state ? (inState.data?.webhookEndpoint?.deliveries ?? []) : endpoint.deliveries;
  const changed = () => {
    onChanged();
    if (state) refetchInState({ requestPolicy: 'network-only' });
  };
  return (
    <>
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
    </>
  );
}
