import { useState, type FormEvent } from 'react';
import { gql, useMutation, useQuery } from 'urql';
import { ErrorAlert, useLiveQuery } from '../graphql';
import { formatTime } from '../format';
import { Page } from '../ui';
import { DELIVERY_FIELDS, DeliveryList, type Delivery } from './Deliveries';

interface Endpoint {
  id: string;
  url: string;
  events: string[];
  name: string | null;
  createdAt: string;
  deliveries: Delivery[];
}

const ENDPOINTS = gql`
  query DashboardWebhooks {
    webhookEndpoints {
      id
      url
      events
      name
      createdAt
      deliveries {
        ...DeliveryFields
      }
    }
  }
  ${DELIVERY_FIELDS}
`;

/** The last 50 deliveries in one state (the list above holds the last 50 of any state). */
const IN_STATE = gql`
  query DashboardDeliveriesInState($id: ID!, $state: WebhookDeliveryState) {
    webhookEndpoint(id: $id) {
      id
      deliveries(state: $state) {
        ...DeliveryFields
      }
    }
  }
  ${DELIVERY_FIELDS}
`;

const CREATE = gql`
  mutation DashboardCreateEndpoint($input: CreateWebhookEndpointInput!) {
    createWebhookEndpoint(input: $input) {
      id
      url
      secret
    }
  }
`;

const PING = gql`
  mutation DashboardPing($id: ID!) {
    sendTestWebhook(id: $id) {
      eventId
    }
  }
`;

const ROTATE = gql`
  mutation DashboardRotate($id: ID!) {
    rotateWebhookSecret(id: $id) {
      id
      secret
    }
  }
`;

const DELETE = gql`
  mutation DashboardDeleteEndpoint($id: ID!) {
    deleteWebhookEndpoint(id: $id) {
      id
    }
  }
`;

const STATES = ['PENDING', 'RETRYING', 'DELIVERED', 'DEAD_LETTER'];

/** A signing secret is shown once, where it was made (creation or rotation): the gateway keeps it encrypted. */
function SecretOnce({ secret, what }: { secret: string; what: string }) {
  return (
    <p className="notice">
      {what} signing secret (shown once): <code className="break">{secret}</code>
    </p>
  );
}

export function Webhooks() {
  const [result, refetch] = useLiveQuery<{ webhookEndpoints: Endpoint[] }>({ query: ENDPOINTS });
  const [createState, create] = useMutation(CREATE);
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState('*');
  const [secret, setSecret] = useState<{ secret: string; what: string } | null>(null);
  const reload = () => refetch({ requestPolicy: 'network-only' });

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const list = events.split(',').map((s) => s.trim()).filter(Boolean);
    const res = await create({ input: { url: url.trim(), events: list.length ? list : ['*'] } });
    if (res.data) {
      setSecret({ secret: res.data.createWebhookEndpoint.secret, what: `${res.data.createWebhookEndpoint.url}:` });
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
      {result.data?.webhookEndpoints.length === 0 && <p className="muted">No endpoints yet.</p>}
      {result.data?.webhookEndpoints.map((endpoint) => (
        <EndpointCard key={endpoint.id} endpoint={endpoint} onChanged={reload} onSecret={(s) => setSecret({ secret: s, what: `${endpoint.url} (new):` })} />
      ))}
    </Page>
  );
}

function EndpointCard({ endpoint, onChanged, onSecret }: { endpoint: Endpoint; onChanged: () => void; onSecret: (secret: string) => void }) {
  const [pingState, ping] = useMutation(PING);
  const [rotateState, rotate] = useMutation(ROTATE);
  const [deleteState, remove] = useMutation(DELETE);
  const [state, setState] = useState('');
  const titleId = `endpoint-${endpoint.id}`;
  const [inState, refetchInState] = useQuery<{ webhookEndpoint: { deliveries: Delivery[] } | null }>({ query: IN_STATE, variables: { id: endpoint.id, state }, pause: !state });
  const deliveries = state ? (inState.data?.webhookEndpoint?.deliveries ?? []) : endpoint.deliveries;
  const changed = () => {
    onChanged();
    if (state) refetchInState({ requestPolicy: 'network-only' });
  };
  return (
    <section className="card" aria-labelledby={titleId}>
      <h2 id={titleId} className="break">
        {endpoint.url}
      </h2>
      <p className="muted">
        {endpoint.id} · events {endpoint.events.join(', ')} · created {formatTime(endpoint.createdAt)}
      </p>
      <div className="actions">
        <button type="button" disabled={pingState.fetching} onClick={() => ping({ id: endpoint.id }).then((r) => !r.error && setTimeout(onChanged, 1000))}>
          Send test ping
        </button>
        <button type="button" disabled={rotateState.fetching} onClick={() => rotate({ id: endpoint.id }).then((r) => r.data && onSecret(r.data.rotateWebhookSecret.secret))}>
          Rotate secret
        </button>
        <button type="button" className="danger" disabled={deleteState.fetching} onClick={() => remove({ id: endpoint.id }).then((r) => !r.error && onChanged())}>
          Delete endpoint
        </button>
      </div>
      <ErrorAlert error={pingState.error ?? rotateState.error ?? deleteState.error} />
      <h3>Deliveries</h3>
      <label>
        Delivery state
        <select value={state} onChange={(e) => setState(e.target.value)}>
          <option value="">All states</option>
          {STATES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
      <ErrorAlert error={inState.error} />
      <DeliveryList deliveries={deliveries} onResent={changed} empty={state ? `No ${state} deliveries.` : 'No deliveries yet.'} />
    </section>
  );
}
