import { useState } from 'react';
import { eventTypeName } from '../format';
import { useEvents, useLiveEvents, type EventRow, type EventType } from '../hooks/events';
import { useListPage } from '../hooks/urlFilters';
import { BASE, Link } from '../router';
import { EllipsizedId } from '../components/EllipsizedId';
import { SidePanel } from '../components/SidePanel';
import { ClockNamed, ClockNote, Time } from '../components/Time';
import { Page } from '../ui';
import { ListPager, ListStatus, SelectFilter, TextFilter } from './lists/ListParts';

/** Every type, as the contract writes it (the record makes the compiler list them all). */
const EVENT_TYPES = Object.keys({
  PAYMENT_CREATED: 1,
  PAYMENT_SUCCEEDED: 1,
  PAYMENT_FAILED: 1,
  PAYMENT_UNKNOWN: 1,
  PAYMENT_RECONCILED: 1,
  PAYMENT_EXPIRED: 1,
  PAYMENT_CANCELLED: 1,
  REFERENCE_PAID: 1,
  REFUND_SUCCEEDED: 1,
  CHECKOUT_SESSION_COMPLETED: 1,
  TEST_PING: 1,
} satisfies Record<EventType, 1>) as EventType[];
const TYPE_OPTIONS = EVENT_TYPES.map((t) => [t, eventTypeName(t)] as const);
const KEYS = ['type', 'object'] as const;

/** The object an event is about and where it is shown: a payment's page, a session in the sessions list. */
export function eventObject(e: EventRow): { id: string; href: string | null; payment: string | null } | null {
  const data = (e.data ?? {}) as { id?: unknown; payment_intent?: unknown };
  const id = typeof data.id === 'string' ? data.id : null;
  if (!id) return null;
  // payment.* and reference.paid carry the payment; a refund and a session name theirs.
  const payment = e.type.startsWith('PAYMENT_') || e.type === 'REFERENCE_PAID' ? id : typeof data.payment_intent === 'string' ? data.payment_intent : null;
  const href =
    e.type === 'CHECKOUT_SESSION_COMPLETED' ? `${BASE}/checkout-sessions?session=${encodeURIComponent(id)}` : payment ? `${BASE}/payments/${encodeURIComponent(payment)}` : null;
  return { id, href, payment };
}

/**
 * The account's events, newest first, a page at a time, by type and by object (the URL holds both). On
 * the first page, events stored while it is open are added at the top when they match the filters.
 */
export function Events() {
  const list = useListPage(`${BASE}/events`, KEYS);
  const { type, object } = list.page.filters;
  const typeFilter = (EVENT_TYPES as string[]).includes(type) ? (type as EventType) : null;
  const [result] = useEvents({ type: typeFilter, objectId: object || null, after: list.page.after || null });
  const [arrived, setArrived] = useState<EventRow[]>([]);
  const [shown, setShown] = useState<EventRow | null>(null);
  const firstPage = !list.page.after;
  const matches = (e: EventRow) => (!typeFilter || e.type === typeFilter) && (!object || eventObject(e)?.payment === object || eventObject(e)?.id === object);
  const [live] = useLiveEvents((event) => setArrived((a) => [event, ...a].slice(0, 25)));
  const page = result.data?.events;
  const seen = new Set<string>();
  const rows = [...(firstPage ? arrived.filter(matches) : []), ...(page?.nodes ?? [])].filter((e) => !seen.has(e.id) && seen.add(e.id));

  return (
    <Page title="Events">
      <p className="muted">Every event of the account as webhooks carry it, newest first; new ones appear as they happen.</p>
      <div className="list-filters">
        <SelectFilter label="Type" value={typeFilter ?? ''} options={TYPE_OPTIONS} any="Any type" onChange={(v) => list.setFilters({ type: v })} />
        <TextFilter key={object} label="Object id" value={object} placeholder="pay_…" onChange={(v) => list.setFilters({ object: v })} />
      </div>
      <ListStatus what="events" error={result.error ?? live.error} loaded={Boolean(page)} empty={rows.length === 0} emptyTitle={list.filtered ? 'No event matches' : 'No events yet'}>
        {list.filtered ? (
          <>
            No event of this type or object. <Link href={`${BASE}/events`}>Show all events</Link>.
          </>
        ) : (
          'Events appear when a payment is created or changes state, when a refund completes, or when you send a test ping from Webhooks.'
        )}
      </ListStatus>
      {!result.error && rows.length > 0 && (
        <ClockNamed>
          {/* The clock is named once, in the time column's header, not on every row. */}
          <table className="data compact events-table" aria-label="Events">
            <thead>
              <tr>
                <th scope="col" className="col-type">
                  Type
                </th>
                <th scope="col">Object</th>
                <th scope="col" className="wide-only col-time">
                  Created
                  <ClockNote clock="sandbox" />
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((e) => {
                const obj = eventObject(e);
                return (
                  <tr key={e.id} data-event-id={e.id}>
                    <th scope="row">
                      <button type="button" className="row-open" onClick={() => setShown(e)} aria-label={`${eventTypeName(e.type)}, ${e.id}`}>
                        <code className="event-type">{eventTypeName(e.type)}</code>
                      </button>
                      <span className="cell-sub narrow-time">
                        <Time iso={e.createdAt} clock="sandbox" />
                      </span>
                    </th>
                    <td className="cell-clip">
                      {obj?.href ? (
                        <Link href={obj.href} className="mono" title={obj.id}>
                          {obj.id}
                        </Link>
                      ) : (
                        <code title={obj?.id}>{obj?.id ?? '—'}</code>
                      )}
                    </td>
                    <td className="wide-only">
                      <Time iso={e.createdAt} clock="sandbox" />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </ClockNamed>
      )}
      {!result.error && (
        <ListPager what="events" hasPrevious={!firstPage} hasNext={Boolean(page?.pageInfo.hasNextPage)} onPrevious={list.previous} onNext={() => page?.pageInfo.endCursor && list.next(page.pageInfo.endCursor)} />
      )}
      {shown && (
        <SidePanel title={eventTypeName(shown.type)} onClose={() => setShown(null)}>
          <dl className="facts">
            <dt>Event</dt>
            <dd>
              <EllipsizedId id={shown.id} what="event id" />
            </dd>
            <dt>Created</dt>
            <dd>
              <Time iso={shown.createdAt} clock="sandbox" />
            </dd>
            <dt>Object</dt>
            <dd>{eventObject(shown)?.href ? <Link href={eventObject(shown)!.href!}>{eventObject(shown)!.id}</Link> : (eventObject(shown)?.id ?? '—')}</dd>
          </dl>
          <h3>Data</h3>
          <pre className="bytes">{JSON.stringify(shown.data, null, 2)}</pre>
        </SidePanel>
      )}
    </Page>
  );
}
