import { useMemo, useState, type FormEvent } from 'react';
import { EllipsizedId } from '../components/EllipsizedId';
import { EmptyState } from '../components/EmptyState';
import { StatusBadge, statusWords } from '../components/StatusBadge';
import { Time } from '../components/Time';
import { ErrorAlert, newIdempotencyKey } from '../graphql';
import { formatAmount, formatEnum } from '../format';
import { pageFromQuery, pageToQuery, useCreatePayment, usePaymentList, useRowUpdates, type PaymentFilters, type PaymentPage } from '../hooks/payments';
import { BASE, Link, navigate, useLocation } from '../router';
import { ACTIVE_METHODS, methodName, PAYMENT_STATUSES, SCENARIOS, type PaymentRow } from '../payments';
import { AmountField, Loading, Page } from '../ui';
import './payments.css';

const paymentHref = (id: string) => `${BASE}/payments/${encodeURIComponent(id)}`;
const go = (page: PaymentPage, replace = false) => navigate(`${BASE}/payments${pageToQuery(page)}`, { replace });

/** The search, the filters and the page all live in the URL: a reload, a shared link or Back shows the same list. */
export function Payments() {
  const { query } = useLocation();
  const search = query.toString();
  const page = useMemo(() => pageFromQuery(new URLSearchParams(search)), [search]);
  const list = usePaymentList(page);
  const filtered = Object.values(page.filters).some(Boolean);
  // A new filter starts again at the first page.
  const setFilters = (filters: PaymentFilters) => go({ filters, after: '', back: [] }, true);

  return (
    <Page title="Payments">
      <NewTestPayment onCreated={list.upsert} />
      <Filters key={page.filters.search} filters={page.filters} onChange={setFilters} />
      <ErrorAlert error={list.error} />
      {list.rows
        .filter((r) => r.status === 'PENDING' && r.paymentMethod === 'MULTICAIXA_EXPRESS')
        .map((r) => (
          <WatchRow key={r.id} id={r.id} onUpdate={list.upsert} />
        ))}
      {!list.loaded && list.fetching ? (
        <Loading what="payments" />
      ) : (
        <>
          <PaymentTable rows={list.rows} />
          {list.rows.length === 0 && (
            <EmptyState title={filtered ? 'No payment matches' : 'No payments yet'}>
              {filtered ? (
                <>
                  Search looks for an exact payment id, merchant reference, mobile number or reference number.{' '}
                  <Link href={`${BASE}/payments`}>Show all payments</Link>.
                </>
              ) : (
                'Make one above with “New test payment”, or with the API: it appears here at once.'
              )}
            </EmptyState>
          )}
        </>
      )}
      <div className="pager" role="group" aria-label="Pages of payments">
        <button type="button" className="secondary" disabled={!page.after} onClick={() => go({ filters: page.filters, after: page.back.at(-1) ?? '', back: page.back.slice(0, -1) })}>
          Previous
        </button>
        <button
          type="button"
          className="secondary"
          disabled={!list.hasNextPage || !list.endCursor}
          onClick={() => go({ filters: page.filters, after: list.endCursor ?? '', back: page.after ? [...page.back, page.after] : page.back })}
        >
          Next
        </button>
      </div>
    </Page>
  );
}

function Filters({ filters, onChange }: { filters: PaymentFilters; onChange: (f: PaymentFilters) => void }) {
  const [text, setText] = useState(filters.search);
  const set = (patch: Partial<PaymentFilters>) => onChange({ ...filters, ...patch });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    set({ search: text.trim() });
  };
  return (
    <div className="payment-filters">
      <form role="search" onSubmit={submit} className="search-row">
        <label htmlFor="payment-search">Search</label>
        <div className="search-field">
          <input
            id="payment-search"
            type="search"
            value={text}
            onChange={(e) => setText(e.target.value)}
            placeholder="Payment id, merchant reference, mobile or reference number"
            aria-describedby="payment-search-hint"
            autoComplete="off"
            spellCheck={false}
          />
          <button type="submit">Search</button>
        </div>
        <p id="payment-search-hint" className="muted hint">
          Exact match: pay_…, your merchant_reference, 9-digit mobile, or a reference number.
        </p>
      </form>
      <div className="filter-grid">
        <Choice label="Status" all="All statuses" value={filters.status} options={PAYMENT_STATUSES.map((v) => [v, statusWords(v)])} onChange={(v) => set({ status: v as PaymentFilters['status'] })} />
        <Choice label="Method" all="All methods" value={filters.method} options={ACTIVE_METHODS.map((v) => [v, formatEnum(v)])} onChange={(v) => set({ method: v as PaymentFilters['method'] })} />
        <label>
          Created from
          <input type="date" value={filters.from} max={filters.to || undefined} onChange={(e) => set({ from: e.target.value })} />
        </label>
        <label>
          Created to
          <input type="date" value={filters.to} min={filters.from || undefined} onChange={(e) => set({ to: e.target.value })} />
        </label>
      </div>
    </div>
  );
}

/** A filter's drop-down: '' (the first choice) filters nothing. */
function Choice({ label, all, value, options, onChange }: { label: string; all: string; value: string; options: Array<[value: string, words: string]>; onChange: (v: string) => void }) {
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">{all}</option>
        {options.map(([v, words]) => (
          <option key={v} value={v}>
            {words}
          </option>
        ))}
      </select>
    </label>
  );
}

/** Who pays: the customer's mobile (express) or the reference to pay at an ATM (reference). */
function payer(r: PaymentRow): string {
  if (r.customer) return r.customer.mobile;
  if (r.reference) return `Ref. ${r.reference.entity} ${r.reference.number}`;
  return '—';
}

/**
 * Seven columns on a wide screen; on a phone two (the payment, and its amount with its status), the rest
 * folded into a line under the id, so nothing scrolls sideways and the id keeps its line.
 */
const COLUMNS: Array<[label: string, className: string]> = [
  ['Payment', 'col-id'],
  ['Amount', 'col-amount'],
  ['Method', 'wide-only col-method'],
  ['Status', 'wide-only col-status'],
  ['Customer or reference', 'wide-only col-payer'],
  ['Failure', 'wide-only col-failure'],
  ['Created', 'wide-only col-created'],
];

function PaymentTable({ rows }: { rows: PaymentRow[] }) {
  return (
    <table className="data payments-table">
      <caption>Payments</caption>
      <thead>
        <tr>
          {COLUMNS.map(([label, className]) => (
            <th scope="col" key={label} className={className}>
              {label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.id} data-id={r.id}>
            <th scope="row" className="col-id">
              <EllipsizedId id={r.id} what={`payment id ${r.id}`} href={paymentHref(r.id)} />
              <span className="narrow-only muted row-meta">
                {methodName(r.paymentMethod)} · {payer(r)} · <Time iso={r.createdAt} clock="sandbox" relative />
                {r.failureCode && ` · ${formatEnum(r.failureCode)}`}
              </span>
            </th>
            <td>
              <span className="nowrap">{formatAmount(r.amount, r.currency)}</span>
              <span className="narrow-only">
                <StatusBadge status={r.status} />
              </span>
            </td>
            <td className="wide-only">{methodName(r.paymentMethod)}</td>
            <td className="wide-only">
              <StatusBadge status={r.status} />
            </td>
            <td className="wide-only">{payer(r)}</td>
            <td className="wide-only">{r.failureCode ? formatEnum(r.failureCode) : ''}</td>
            <td className="wide-only">
              <Time iso={r.createdAt} clock="sandbox" relative />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function WatchRow({ id, onUpdate }: { id: string; onUpdate: (row: PaymentRow) => void }) {
  useRowUpdates(id, onUpdate);
  return null;
}

function NewTestPayment({ onCreated }: { onCreated: (row: PaymentRow) => void }) {
  const [scenario, setScenario] = useState(SCENARIOS[0]!.value);
  const [amount, setAmount] = useState('5000');
  const [created, setCreated] = useState<PaymentRow | null>(null);
  const [state, create] = useCreatePayment();

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const s = SCENARIOS.find((x) => x.value === scenario)!;
    const input = {
      amount: Number(amount),
      currency: 'AOA',
      paymentMethod: s.method,
      ...(s.mobile ? { customer: { mobile: s.mobile } } : {}),
      metadata: { source: 'dashboard' },
    };
    const res = await create({ input, key: newIdempotencyKey() });
    const intent = res.data?.createPaymentIntent ?? null;
    setCreated(intent);
    if (intent) onCreated(intent);
  };

  return (
    <form className="card" aria-labelledby="new-payment-title" onSubmit={submit}>
      <h2 id="new-payment-title">New test payment</h2>
      <div className="fields">
        <label>
          Scenario
          <select value={scenario} onChange={(e) => setScenario(e.target.value)}>
            {SCENARIOS.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </select>
        </label>
        <AmountField value={amount} onChange={setAmount} />
      </div>
      <button type="submit" disabled={state.fetching}>
        New test payment
      </button>
      <ErrorAlert error={state.error} />
      <p aria-live="polite" className="muted">
        {created && (
          <>
            Created <Link href={paymentHref(created.id)}>{created.id}</Link>
            {created.reference ? ` (reference ${created.reference.entity} ${created.reference.number})` : ''}.
          </>
        )}
      </p>
    </form>
  );
}
