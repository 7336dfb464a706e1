import { useState, type FormEvent } from 'react';
import { ErrorAlert } from '../graphql';
import { formatAmount } from '../format';
import { useCheckoutSession, useCreateCheckoutSession } from '../hooks/checkoutSessions';
import { BASE } from '../router';
import { EllipsizedId } from '../components/EllipsizedId';
import { EmptyState } from '../components/EmptyState';
import { StatusBadge } from '../components/StatusBadge';
import { Time } from '../components/Time';
import { AmountField, Page } from '../ui';

/**
 * Create a hosted checkout session and look one up by id. (The API has no list of sessions: the
 * sessions made here are listed for this visit.)
 */
export function CheckoutSessions() {
  const [createState, create] = useCreateCheckoutSession();
  const [amount, setAmount] = useState('10000');
  const [reference, setReference] = useState('');
  const [made, setMade] = useState<string[]>([]);
  const [lookup, setLookup] = useState('');
  const [shown, setShown] = useState<string | null>(null);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const res = await create({ input: { amount: Number(amount), ...(reference.trim() ? { merchantReference: reference.trim() } : {}) } });
    if (res.data) setMade((m) => [res.data!.createCheckoutSession.id, ...m]);
  };

  return (
    <Page title="Checkout sessions">
      <form className="card" aria-labelledby="new-session-title" onSubmit={submit}>
        <h2 id="new-session-title">New checkout session</h2>
        <div className="fields">
          <AmountField value={amount} onChange={setAmount} />
          <label>
            Merchant reference
            <input value={reference} maxLength={64} onChange={(e) => setReference(e.target.value)} />
          </label>
        </div>
        <button type="submit" disabled={createState.fetching}>
          Create session
        </button>
        <ErrorAlert error={createState.error} />
      </form>
      <form
        className="card inline-form"
        aria-labelledby="find-session-title"
        onSubmit={(e) => {
          e.preventDefault();
          setShown(lookup.trim() || null);
        }}
      >
        <h2 id="find-session-title">Find a session</h2>
        <label>
          Session id
          <input value={lookup} onChange={(e) => setLookup(e.target.value)} placeholder="cs_…" />
        </label>
        <button type="submit">Find</button>
      </form>
      {shown && <SessionCard key={shown} id={shown} />}
      <h2>Made on this visit</h2>
      {made.length === 0 && <EmptyState title="No sessions made yet">The API lists no checkout sessions: the ones you create here are listed for this visit, and any can be found by its id above.</EmptyState>}
      {made.map((id) => (
        <SessionCard key={id} id={id} />
      ))}
    </Page>
  );
}

function SessionCard({ id }: { id: string }) {
  const [result] = useCheckoutSession(id);
  if (result.error) return <ErrorAlert error={result.error} />;
  const s = result.data?.checkoutSession;
  if (!s) return result.fetching ? null : <ErrorAlert error={`resource_not_found: no checkout session ${id}`} />;
  return (
    <section className="card" aria-label={`Checkout session ${s.id}`}>
      <h3>
        <EllipsizedId id={s.id} what="checkout session id" />
      </h3>
      <dl className="facts">
        <dt>Status</dt>
        <dd>
          <StatusBadge status={s.status} kind="checkout" />
        </dd>
        <dt>Amount</dt>
        <dd>{formatAmount(s.amount, s.currency)}</dd>
        <dt>Page</dt>
        <dd>
          <a href={s.url} className="break">
            {s.url}
          </a>
        </dd>
        <dt>Payment</dt>
        <dd>{s.paymentIntentId ? <EllipsizedId id={s.paymentIntentId} what="payment id" href={`${BASE}/payments/${encodeURIComponent(s.paymentIntentId)}`} /> : '—'}</dd>
        <dt>Expires</dt>
        <dd>
          <Time iso={s.expiresAt} clock="sandbox" relative />
        </dd>
      </dl>
    </section>
  );
}
