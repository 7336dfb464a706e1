import { useState } from 'react';
import { ErrorAlert, throwIfError } from '../../graphql';
import { BASE, Link, navigate } from '../../router';
import { useListPage } from '../../hooks/urlFilters';
import {
  useDeleteEndpoint,
  useEndpointLive,
  useEndpointDeliveries,
  usePendingEvents,
  useRotateSecret,
  useSendTestPing,
  useWebhookEndpoint,
  type EventType,
  type WebhookDeliveryState,
  type WebhookEndpoint,
} from '../../hooks/webhooks';
import { ConfirmButton } from '../../components/ConfirmDialog';
import { EllipsizedId } from '../../components/EllipsizedId';
import { EmptyState } from '../../components/EmptyState';
import { statusWords } from '../../components/StatusBadge';
import { Time } from '../../components/Time';
import { Page } from '../../ui';
import { ChaosPanel } from './Chaos';
import { DeliveryDetail } from './DeliveryDetail';
import { DeliveryFilters, DeliveryTable } from './DeliveryTable';
import { endpointTitle, eventsText, MODE_WORDS, successText } from './endpointWords';
import { LoadFailed } from './LoadFailed';
import { PendingEventList } from './PendingEvents';
import { SecretOnce } from './SecretOnce';
import './webhooks.css';

const FILTERS = ['state', 'type'] as const;

/** A pull endpoint's pending events, reloaded after each event of the account. */
function PullEvents({ endpointId }: { endpointId: string }) {
  const [pending, refetchPending] = usePendingEvents(endpointId, true);
  const refreshPending = () => refetchPending({ requestPolicy: 'network-only' });
  useEndpointLive(refreshPending);
  return (
    <section className="card" aria-labelledby="pending-title">
      <h2 id="pending-title">Pending events</h2>
      <LoadFailed what="the pending events" error={pending.error} onRetry={refreshPending} />
      {!pending.error && <PendingEventList endpointId={endpointId} events={pending.data?.webhookEndpoint?.pendingEvents} refreshing={pending.fetching} onRefresh={refreshPending} />}
    </section>
  );
}

/** One endpoint: its settings and actions, then chaos and deliveries (push) or pending events (pull). */
export function EndpointPage({ id }: { id: string }) {
  const [result, refetch] = useWebhookEndpoint(id);
  const reload = () => refetch({ requestPolicy: 'network-only' });
  const endpoint = result.data?.webhookEndpoint;
  if (result.error) {
    return (
      <Page title="Webhook endpoint">
        <LoadFailed what="this endpoint" error={result.error} onRetry={reload} />
        <Link href={`${BASE}/webhooks`}>All endpoints</Link>
      </Page>
    );
  }
  if (result.data && !endpoint) {
    return (
      <Page title="Endpoint not found">
        <p>
          There is no endpoint {id} in this account (it may have been deleted). <Link href={`${BASE}/webhooks`}>All endpoints</Link>
        </p>
      </Page>
    );
  }
  if (!endpoint) return <p className="muted">Loading the endpoint…</p>;
  return <Endpoint endpoint={endpoint} onChanged={reload} />;
}

function Endpoint({ endpoint, onChanged }: { endpoint: WebhookEndpoint; onChanged: () => void }) {
  const pull = endpoint.mode === 'PULL';
  const title = endpointTitle(endpoint);
  const [pingState, ping] = useSendTestPing();
  const [rotateState, rotate] = useRotateSecret();
  const [, remove] = useDeleteEndpoint();
  // The secret of a rotation made on this page: it belongs to this endpoint and goes when the page is left.
  const [secret, setSecret] = useState<string | null>(null);
  const success = successText(endpoint.recentSuccess);

  const deleteEndpoint = async () => {
    const res = await remove({ id: endpoint.id });
    throwIfError(res);
    navigate(`${BASE}/webhooks`);
  };
  const rotateSecret = async () => {
    const res = await rotate({ id: endpoint.id });
    throwIfError(res);
    setSecret(res.data?.rotateWebhookSecret.secret ?? null);
  };

  return (
    <Page title={title} heading={<span className="break">{title}</span>}>
      <p>
        <Link href={`${BASE}/webhooks`}>← All endpoints</Link>
      </p>
      {endpoint.description && <p className="endpoint-description">{endpoint.description}</p>}
      <dl className="facts" aria-label="Endpoint settings">
        <dt>Id</dt>
        <dd>
          <EllipsizedId id={endpoint.id} what="endpoint id" />
        </dd>
        <dt>Mode</dt>
        <dd data-testid="endpoint-mode">
          <span className="badge tone-info" data-mode={endpoint.mode}>
            {MODE_WORDS[endpoint.mode].word}
          </span>{' '}
          <span className="muted">{MODE_WORDS[endpoint.mode].how}</span>
        </dd>
        {!pull && (
          <>
            <dt>URL</dt>
            <dd className="break">{endpoint.url}</dd>
          </>
        )}
        <dt>Events</dt>
        <dd>{eventsText(endpoint.events)}</dd>
        <dt>Created</dt>
        <dd>
          <Time iso={endpoint.createdAt} clock="sandbox" />
        </dd>
        {!pull && (
          <>
            <dt>Success, 24 h</dt>
            <dd data-testid="endpoint-success">
              {success.rate} <span className="muted">({success.detail})</span>
            </dd>
          </>
        )}
      </dl>
      <div className="actions">
        {/* A pull endpoint gets the ping too: it waits among its pending events. */}
        {/* What the ping makes shows with the page's live reload (useEndpointLive). */}
        <button type="button" disabled={pingState.fetching} onClick={() => ping({ id: endpoint.id })}>
          Send test ping
        </button>
        <ConfirmButton
          title="Rotate the signing secret?"
          description={<p>A new secret is made and shown once. For 24 hours deliveries carry signatures with both the new and the old secret; after that, a receiver that still checks only the old one rejects every delivery.</p>}
          confirmLabel="Rotate secret"
          action={rotateSecret}
        >
          Rotate secret
        </ConfirmButton>
        <ConfirmButton
          title="Delete this endpoint?"
          description={
            pull ? (
              <p>
                <span className="break">{title}</span> stops collecting events, and its unacknowledged events are deleted: your server can no longer pull them.
              </p>
            ) : (
              <p>
                <span className="break">{endpoint.url}</span> stops receiving events, its pending retries are cancelled and its past deliveries are no longer listed.
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
      {secret && <SecretOnce secret={secret} title={`${title} (new)`} />}
      {pull ? (
        <PullEvents endpointId={endpoint.id} />
      ) : (
        <>
          <ChaosPanel endpointId={endpoint.id} chaos={endpoint.chaos?.enabled ? endpoint.chaos : null} onChanged={onChanged} />
          <EndpointDeliveries endpointId={endpoint.id} onChanged={onChanged} />
        </>
      )}
    </Page>
  );
}

/** A push endpoint's deliveries, a page at a time, filtered as the URL says; a row opens its detail beside the list. */
function EndpointDeliveries({ endpointId, onChanged }: { endpointId: string; onChanged: () => void }) {
  const list = useListPage(`${BASE}/webhooks/${encodeURIComponent(endpointId)}`, FILTERS);
  const { state, type } = list.page.filters;
  const [result, refetch] = useEndpointDeliveries(
    endpointId,
    { after: list.page.after, state: (state || null) as WebhookDeliveryState | null, eventType: (type || null) as EventType | null },
    false,
  );
  const [open, setOpen] = useState<string | null>(null);
  const reload = () => refetch({ requestPolicy: 'network-only' });
  useEndpointLive(() => {
    reload();
    onChanged();
  });
  const conn = result.data?.webhookEndpoint?.deliveriesConnection;
  const rows = conn?.nodes ?? [];
  const paged = list.page.after !== '' || conn?.pageInfo.hasNextPage;
  return (
    <section aria-labelledby="deliveries-title">
      <div className="list-head">
        <h2 id="deliveries-title">Deliveries</h2>
        {/* The endpoint too: its chaos report and success rate move with the deliveries. */}
        <button
          type="button"
          className="secondary"
          disabled={result.fetching}
          onClick={() => {
            reload();
            onChanged();
          }}
        >
          Refresh
        </button>
      </div>
      <DeliveryFilters state={state} type={type} onChange={list.setFilters} />
      <LoadFailed what="the deliveries" error={result.error} onRetry={reload} />
      {/* After a failed load the error stands alone: an empty list would say there is nothing. */}
      {conn && !result.error && rows.length === 0 && (
        <EmptyState title={list.filtered ? 'No deliveries match these filters' : 'No deliveries yet'}>
          {list.filtered
            ? `None ${state ? `in “${statusWords(state, 'delivery')}”` : 'of this type'} among this endpoint's deliveries; clear the filters to see them all.`
            : 'Deliveries appear here when an event is sent to this endpoint (try “Send test ping”).'}
        </EmptyState>
      )}
      {!result.error && rows.length > 0 && <DeliveryTable deliveries={rows} onOpen={setOpen} />}
      {/* A pager only where there is another page. */}
      {!result.error && rows.length > 0 && paged && (
        <nav className="pager" aria-label="Pages of deliveries">
          {list.page.after !== '' && (
            <button type="button" className="secondary" onClick={list.previous}>
              Previous
            </button>
          )}
          {conn?.pageInfo.hasNextPage && conn.pageInfo.endCursor && (
            <button type="button" className="secondary" onClick={() => list.next(conn.pageInfo.endCursor as string)}>
              Next
            </button>
          )}
        </nav>
      )}
      {open && (
        <DeliveryDetail
          id={open}
          onClose={() => setOpen(null)}
          onResent={() => {
            reload();
            onChanged();
          }}
        />
      )}
    </section>
  );
}
