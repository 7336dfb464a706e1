import { useEffect, useState, type FormEvent, type MouseEvent } from 'react';
import { CreateButton } from '../components/SidePanel';
import { EmptyState } from '../components/EmptyState';
import { StatusBadge, statusWords } from '../components/StatusBadge';
import { Time, useSandboxClock } from '../components/Time';
import { ErrorAlert, newIdempotencyKey } from '../graphql';
import { clockLabel, formatAmount, formatEnum } from '../format';
import { FILTER_KEYS, listErrorWords, useCreatePayment, usePaymentList, useRowUpdates, type PaymentFilters } from '../hooks/payments';
import { useListPage } from '../hooks/urlFilters';
import { BASE, Link, navigate, useLocation } from '../router';
import { ACTIVE_METHODS, methodName, PAYMENT_STATUSES, SCENARIOS, type PaymentRow } from '../payments';
import { AmountField, Loading, Page } from '../ui';
import { PaymentPane } from './paymentDetail/PaymentPane';
import './payments.css';

const LIST = `${BASE}/payments`;
const paymentHref = (id: string) => `${LIST}/${encodeURIComponent(id)}`;
/** Wide enough for the pane beside the list; narrower, a row opens the payment's page. */
const PANE_QUERY = '(min-width: 48rem)';

/**
 * The payment shown in the pane is `?selected=` in the URL, beside the list's filters and page: a reload
 * keeps it open and Back closes it. Set without navigate(), which scrolls to the top: the list behind
 * must keep its scroll. The router follows popstate, so one is dispatched to re-render.
 */
function selectPayment(id: string | null) {
  const query = new URLSearchParams(location.search);
  if (id) query.set('selected', id);
  else query.delete('selected');
  const search = query.toString();
  const url = `${location.pathname}${search ? `?${search}` : ''}`;
  if (id) history.pushState(null, '', url);
  else history.replaceState(null, '', url);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

/**
 * On a phone a row opens the payment's page (navigate() scrolls to the top); the list's scroll is kept
 * for the way back, per list URL, and given back once its rows are there again.
 */
const SCROLL_KEY = 'pgw.payments.scroll';
function keepScroll() {
  sessionStorage.setItem(SCROLL_KEY, JSON.stringify({ search: location.search, y: window.scrollY }));
}
function useScrollBack(ready: boolean) {
  useEffect(() => {
    if (!ready) return;
    const kept = sessionStorage.getItem(SCROLL_KEY);
    if (!kept) return;
    sessionStorage.removeItem(SCROLL_KEY);
    const { search, y } = JSON.parse(kept) as { search: string; y: number };
    if (search === location.search) window.scrollTo(0, y);
  }, [ready]);
}

/** The list first: one compact row per payment, the search and filters in a toolbar above, creating in a side panel. */
export function Payments() {
  const { query } = useLocation();
  const { page, filtered, setFilters, next, previous } = useListPage(LIST, FILTER_KEYS);
  const filters = page.filters as PaymentFilters;
  const list = usePaymentList({ filters, after: page.after });
  const [created, setCreated] = useState<PaymentRow | null>(null);
  const selected = query.get('selected');
  useScrollBack(list.loaded && list.rows.length > 0);

  const onCreated = (row: PaymentRow) => {
    list.upsert(row);
    setCreated(row);
  };

  return (
    <Page title="Payments">
      <div className="list-head payments-toolbar">
        <SearchForm key={filters.search} value={filters.search} onSearch={(search) => setFilters({ search })} />
        <CreateButton label="New test payment">{(close) => <NewTestPayment onCreated={(row) => (onCreated(row), close())} />}</CreateButton>
      </div>
      <Filters filters={filters} onChange={setFilters} />
      <p aria-live="polite" className="muted created-note">
        {created && (
          <>
            Created <Link href={paymentHref(created.id)}>{created.id}</Link>
            {created.reference ? ` (reference ${created.reference.entity} ${created.reference.number})` : ''}.
          </>
        )}
      </p>
      <ErrorAlert error={listErrorWords(list.error)} />
      {list.rows
        .filter((r) => r.status === 'PENDING' && r.paymentMethod === 'MULTICAIXA_EXPRESS')
        .map((r) => (
          <WatchRow key={r.id} id={r.id} onUpdate={list.upsert} />
        ))}
      {!list.loaded && list.fetching ? (
        <Loading what="payments" />
      ) : (
        // A refused or failed read has said so above: no table and no "No payments yet" under it (rows that
        // arrived live are still shown).
        (list.rows.length > 0 || (list.loaded && !list.error)) && <PaymentTable rows={list.rows} selected={selected} />
      )}
      {list.loaded && !list.error && list.rows.length === 0 && (
        <EmptyState title={filtered ? 'No payment matches' : 'No payments yet'}>
          {filtered ? (
            <>
              Nothing matches these filters. <Link href={LIST}>Show all payments</Link>.
            </>
          ) : (
            'Make one with “New test payment”, or with the API: it appears here at once.'
          )}
        </EmptyState>
      )}
      {/* One page only: no pager at all, rather than two disabled buttons. */}
      {(page.after || list.hasNextPage) && (
        <div className="pager" role="group" aria-label="Pages of payments">
          <button type="button" className="secondary" disabled={!page.after} onClick={previous}>
            Previous
          </button>
          <button type="button" className="secondary" disabled={!list.hasNextPage || !list.endCursor} onClick={() => list.endCursor && next(list.endCursor)}>
            Next
          </button>
        </div>
      )}
      {selected && <PaymentPane key={selected} id={selected} href={paymentHref(selected)} onClose={() => selectPayment(null)} />}
    </Page>
  );
}

const SEARCH_HINT = 'An id (pay_ and 3 characters or more) or a reference number (3 digits or more), or their start; a whole mobile; a merchant reference in any case.';

function SearchForm({ value, onSearch }: { value: string; onSearch: (search: string) => void }) {
  const [text, setText] = useState(value);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onSearch(text.trim());
  };
  return (
    <form role="search" aria-label="Payments" onSubmit={submit} className="payment-search">
      <label htmlFor="payment-search">Search</label>
      <input
        id="payment-search"
        type="search"
        value={text}
        onChange={(e) => setText(e.target.value)}
        placeholder="pay_…, reference number, mobile, merchant reference"
        aria-describedby="payment-search-hint"
        autoComplete="off"
        spellCheck={false}
      />
      <button type="submit" className="secondary">
        Search
      </button>
      <p id="payment-search-hint" className="muted hint">
        {SEARCH_HINT}
      </p>
    </form>
  );
}

/** Status, method and dates, folded under "Filters" (open while one is set), so that the rows keep the first screen. */
function Filters({ filters, onChange }: { filters: PaymentFilters; onChange: (patch: Partial<PaymentFilters>) => void }) {
  const set = filters.status || filters.method || filters.from || filters.to;
  const count = [filters.status, filters.method, filters.from, filters.to].filter(Boolean).length;
  return (
    <details className="payment-filters" open={Boolean(set) || undefined}>
      <summary>Filters{count ? ` (${count} set)` : ''}</summary>
      <div className="filter-grid">
        <Choice label="Status" all="All statuses" value={filters.status} options={PAYMENT_STATUSES.map((v) => [v, statusWords(v)])} onChange={(status) => onChange({ status: status as PaymentFilters['status'] })} />
        <Choice label="Method" all="All methods" value={filters.method} options={ACTIVE_METHODS.map((v) => [v, formatEnum(v)])} onChange={(method) => onChange({ method: method as PaymentFilters['method'] })} />
        <label>
          Created from
          <input type="date" value={filters.from} max={filters.to || undefined} onChange={(e) => onChange({ from: e.target.value })} />
        </label>
        <label>
          Created to
          <input type="date" value={filters.to} min={filters.from || undefined} onChange={(e) => onChange({ to: e.target.value })} />
        </label>
      </div>
    </details>
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

/**
 * Six columns on a wide screen, one line each (a failure's reason beside its status); on a phone two (the
 * payment with a line of its method, merchant reference, age and failure under the id; its amount with
 * its status), so nothing scrolls sideways.
 */
const COLUMNS: Array<[label: string, className: string]> = [
  ['Payment', 'col-id'],
  ['Amount', 'col-amount'],
  ['Status', 'wide-only col-status'],
  ['Method', 'wide-only col-method'],
  ['Merchant reference', 'wide-only col-merchant'],
  ['Created', 'wide-only col-created'],
];

function PaymentTable({ rows, selected }: { rows: PaymentRow[]; selected: string | null }) {
  // Which clock the times are on, said once in the header rather than on every row.
  const label = clockLabel('sandbox', useSandboxClock().offsetSeconds);
  // A row opens the pane on a wide screen, the payment's page on a phone; with a modifier key the id's
  // link does what links do (a new tab).
  const open = (id: string) => (e: MouseEvent) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    if (window.matchMedia(PANE_QUERY).matches) selectPayment(id);
    else {
      keepScroll();
      navigate(paymentHref(id));
    }
  };
  return (
    <table className="data payments-table">
      <caption className="visually-hidden">Payments</caption>
      <thead>
        <tr>
          {COLUMNS.map(([name, className]) => (
            <th scope="col" key={name} className={className}>
              {name}
              {name === 'Created' && label && <span className="clock-note"> ({label})</span>}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr
            key={r.id}
            data-id={r.id}
            className={r.id === selected ? 'selected' : undefined}
            onClick={(e) => {
              // A click anywhere on the row opens it, except on its link (handled there) and buttons.
              if (!(e.target as Element).closest('a, button')) open(r.id)(e);
            }}
          >
            <th scope="row" className="col-id">
              <a href={paymentHref(r.id)} className="mono row-link" title={r.id} onClick={open(r.id)}>
                {r.id}
              </a>
              <span className="narrow-only muted row-meta">
                {methodName(r.paymentMethod)}
                {r.merchantReference && ` · ${r.merchantReference}`} · <Time iso={r.createdAt} clock="sandbox" relative />
                {r.failureCode && ` · ${formatEnum(r.failureCode)}`}
              </span>
            </th>
            <td className="col-amount">
              <span className="nowrap">{formatAmount(r.amount, r.currency)}</span>
              <span className="narrow-only">
                <StatusBadge status={r.status} />
              </span>
            </td>
            <td className="wide-only status-cell" title={r.failureCode ? formatEnum(r.failureCode) : undefined}>
              <StatusBadge status={r.status} />
              {r.failureCode && <span className="muted"> {formatEnum(r.failureCode)}</span>}
            </td>
            <td className="wide-only">{methodName(r.paymentMethod)}</td>
            <td className="wide-only ellipsis-cell" title={r.merchantReference ?? undefined}>
              {r.merchantReference ?? <span className="muted">—</span>}
            </td>
            <td className="wide-only nowrap">
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

/** The create form, in the side panel: a scenario of the spec and an amount. */
function NewTestPayment({ onCreated }: { onCreated: (row: PaymentRow) => void }) {
  const [scenario, setScenario] = useState(SCENARIOS[0]!.value);
  const [amount, setAmount] = useState('5000');
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
    const intent = res.data?.createPaymentIntent;
    if (intent) onCreated(intent);
  };

  return (
    <form onSubmit={submit}>
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
      <button type="submit" disabled={state.fetching}>
        Create test payment
      </button>
      <ErrorAlert error={state.error} />
    </form>
  );
}
