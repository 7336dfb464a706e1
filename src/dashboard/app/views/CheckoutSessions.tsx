import { useState, type FormEvent } from 'react';
import { ErrorAlert } from '../graphql';
import { formatAmount } from '../format';
import { useCheckoutSession, useCheckoutSessions, useCreateCheckoutSession, type CheckoutSessionRow, type CheckoutSessionStatus } from '../hooks/checkoutSessions';
import { useListPage } from '../hooks/urlFilters';
import { BASE, Link, useLocation } from '../router';
import { EllipsizedId } from '../components/EllipsizedId';
import { CreateButton, SidePanel } from '../components/SidePanel';
import { StatusBadge } from '../components/StatusBadge';
import { ClockNamed, ClockNote, Time } from '../components/Time';
import { AmountField, Page } from '../ui';
import { ListPager, ListStatus, SelectFilter } from './lists/ListParts';

const KEYS = ['status'] as const;
const STATUSES: ReadonlyArray<readonly [CheckoutSessionStatus, string]> = [
  ['OPEN', 'Open'],
  ['COMPLETED', 'Completed'],
  ['EXPIRED', 'Expired'],
];

/**
 * The account's hosted checkout sessions, newest first, by status (in the URL). A row opens the session
 * in a side panel; `?session=<id>` (an event's link) opens it too. Creating is a button.
 */
export function CheckoutSessions() {
  const list = useListPage(`${BASE}/checkout-sessions`, KEYS);
  const { query } = useLocation();
  const status = STATUSES.find(([s]) => s === list.page.filters.status.toUpperCase())?.[0] ?? null;
  const [result, refetch] = useCheckoutSessions({ status, after: list.page.after || null });
  const [shown, setShown] = useState<string | null>(() => query.get('session'));
  const page = result.data?.checkoutSessions;
  const rows = page?.nodes ?? [];

  return (
    <Page title="Checkout sessions">
      <div className="list-head">
        <p className="muted">Hosted payment pages for one amount, valid 30 minutes. Newest first.</p>
        <CreateButton label="New checkout session">
          {(close) => (
            <NewSession
              onCreated={(id) => {
                close();
                refetch({ requestPolicy: 'network-only' });
                setShown(id);
              }}
            />
          )}
        </CreateButton>
      </div>
      <div className="list-filters">
        <SelectFilter label="Status" value={status ?? ''} options={STATUSES} any="Any status" onChange={(v) => list.setFilters({ status: v.toLowerCase() })} />
      </div>
      <ListStatus what="checkout sessions" error={result.error} loaded={Boolean(page)} empty={rows.length === 0} emptyTitle={list.filtered ? 'No session matches' : 'No checkout sessions yet'}>
        {list.filtered ? (
          <>
            No session has this status. <Link href={`${BASE}/checkout-sessions`}>Show all sessions</Link>.
          </>
        ) : (
          'A checkout session is a page where a customer pays an amount you set. Make one with “New checkout session”, or with POST /v1/checkout/sessions.'
        )}
      </ListStatus>
      {!result.error && rows.length > 0 && (
        <ClockNamed>
          {/* The clock is named once, in the time column's header, not on every row. */}
          <table className="data compact sessions-table" aria-label="Checkout sessions">
            <thead>
              <tr>
                <th scope="col">Session</th>
                <th scope="col" className="col-amount">
                  Amount
                </th>
                <th scope="col" className="col-status">
                  Status
                </th>
                <th scope="col" className="wide-only">
                  Merchant reference
                </th>
                <th scope="col" className="wide-only col-time">
                  Created
                  <ClockNote clock="sandbox" />
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((s) => (
                <tr key={s.id}>
                  <th scope="row">
                    <button type="button" className="row-open mono" title={s.id} onClick={() => setShown(s.id)}>
                      {s.id}
                    </button>
                  </th>
                  <td className="num">{formatAmount(s.amount, s.currency)}</td>
                  <td>
                    <StatusBadge status={s.status} kind="checkout" />
                  </td>
                  <td className="wide-only cell-clip">{s.merchantReference ?? '—'}</td>
                  <td className="wide-only">
                    <Time iso={s.createdAt} clock="sandbox" />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ClockNamed>
      )}
      {!result.error && (
        <ListPager
          what="checkout sessions"
          hasPrevious={Boolean(list.page.after)}
          hasNext={Boolean(page?.pageInfo.hasNextPage)}
          onPrevious={list.previous}
          onNext={() => page?.pageInfo.endCursor && list.next(page.pageInfo.endCursor)}
        />
      )}
      {shown && (
        <SidePanel title="Checkout session" onClose={() => setShown(null)}>
          <SessionDetail id={shown} row={rows.find((r) => r.id === shown)} />
        </SidePanel>
      )}
    </Page>
  );
}

function NewSession({ onCreated }: { onCreated: (id: string) => void }) {
  const [state, create] = useCreateCheckoutSession();
  const [amount, setAmount] = useState('10000');
  const [reference, setReference] = useState('');
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const res = await create({ input: { amount: Number(amount), ...(reference.trim() ? { merchantReference: reference.trim() } : {}) } });
    if (res.data) onCreated(res.data.createCheckoutSession.id);
  };
  return (
    <form onSubmit={submit}>
      <AmountField value={amount} onChange={setAmount} />
      <label>
        Merchant reference
        <input value={reference} maxLength={64} onChange={(e) => setReference(e.target.value)} />
      </label>
      <button type="submit" disabled={state.fetching}>
        Create session
      </button>
      <ErrorAlert error={state.error} />
    </form>
  );
}

/** The session as the list has it, or read by id (a link from an event may name one of another page). */
function SessionDetail({ id, row }: { id: string; row?: CheckoutSessionRow }) {
  const [result] = useCheckoutSession(id);
  const s = result.data?.checkoutSession ?? row;
  if (!s) {
    if (result.error) return <ErrorAlert error={result.error} />;
    return result.fetching ? null : <p role="alert" className="error">There is no checkout session {id} in this account.</p>;
  }
  return (
    <section aria-label={`Checkout session ${s.id}`}>
      <dl className="facts">
        <dt>Id</dt>
        <dd>
          <EllipsizedId id={s.id} what="checkout session id" />
        </dd>
        <dt>Status</dt>
        <dd>
          <StatusBadge status={s.status} kind="checkout" />
        </dd>
        <dt>Amount</dt>
        <dd>{formatAmount(s.amount, s.currency)}</dd>
        <dt>Reference</dt>
        <dd>{s.merchantReference ?? '—'}</dd>
        <dt>Page</dt>
        <dd>
          <a href={s.url} className="break">
            {s.url}
          </a>
        </dd>
        <dt>Payment</dt>
        <dd>{s.paymentIntentId ? <EllipsizedId id={s.paymentIntentId} what="payment id" href={`${BASE}/payments/${encodeURIComponent(s.paymentIntentId)}`} /> : '—'}</dd>
        <dt>Created</dt>
        <dd>
          <Time iso={s.createdAt} clock="sandbox" />
        </dd>
        {/* An open session has an expiry ahead; an ended one says how it ended, not when it would have expired. */}
        <dt>{s.status === 'OPEN' ? 'Expires' : s.status === 'EXPIRED' ? 'Expired' : 'Ended'}</dt>
        <dd>{s.status === 'COMPLETED' ? 'Paid' : <Time iso={s.expiresAt} clock="sandbox" relative />}</dd>
      </dl>
    </section>
  );
}
