import { useCallback, useMemo, useState, type FormEvent } from 'react';
import { gql, useMutation, useSubscription } from 'urql';
import { ErrorAlert, newIdempotencyKey, useLiveQuery } from '../graphql';
import { formatAmount, formatEnum, formatTime } from '../format';
import { BASE, Link } from '../router';
import { byNewest, newer, PAYMENT_ROW, PAYMENT_STATUSES, SCENARIOS, type PaymentRow } from '../payments';
import { AmountField, Loading, Page, StatusBadge } from '../ui';

const LIST = gql`
  query DashboardPayments($status: PaymentIntentStatus) {
    paymentIntents(first: 50, status: $status) {
      nodes {
        ...PaymentRow
      }
    }
  }
  ${PAYMENT_ROW}
`;

/** Every event of the account: creations add rows, the others carry the intent as it became. */
const ACCOUNT_EVENTS = gql`
  subscription DashboardPaymentEvents {
    events {
      id
      type
      paymentIntent {
        ...PaymentRow
      }
      refund {
        paymentIntent {
          ...PaymentRow
        }
      }
    }
  }
  ${PAYMENT_ROW}
`;

/** PENDING → PROCESSING has no event (spec): an express payment still PENDING is followed by its own subscription. */
const INTENT_UPDATED = gql`
  subscription DashboardRowUpdated($id: ID!) {
    paymentIntentUpdated(id: $id) {
      paymentIntent {
        ...PaymentRow
      }
    }
  }
  ${PAYMENT_ROW}
`;

const CREATE = gql`
  mutation DashboardCreatePayment($input: CreatePaymentIntentInput!, $key: String!) {
    createPaymentIntent(input: $input, idempotencyKey: $key) {
      ...PaymentRow
    }
  }
  ${PAYMENT_ROW}
`;

export function Payments() {
  const [status, setStatus] = useState('');
  const [result] = useLiveQuery<{ paymentIntents: { nodes: PaymentRow[] } }>({ query: LIST, variables: { status: status || null } });
  // What arrived live since the list was read: merged over it, newest version of each intent wins.
  const [live, setLive] = useState<Map<string, PaymentRow>>(() => new Map());
  const upsert = useCallback((row: PaymentRow | null | undefined) => {
    if (!row) return;
    setLive((m) => {
      const next = new Map(m);
      next.set(row.id, newer(m.get(row.id), row));
      return next;
    });
  }, []);
  const [events] = useSubscription({ query: ACCOUNT_EVENTS }, (_prev: unknown, data: any) => {
    upsert(data.events.paymentIntent ?? data.events.refund?.paymentIntent);
    return data;
  });

  const rows = useMemo(() => {
    const all = new Map<string, PaymentRow>();
    for (const row of result.data?.paymentIntents.nodes ?? []) all.set(row.id, row);
    for (const row of live.values()) all.set(row.id, newer(all.get(row.id), row));
    return [...all.values()].filter((r) => !status || r.status === status).sort(byNewest).slice(0, 50);
  }, [result.data, live, status]);

  return (
    <Page title="Payments">
      <NewTestPayment onCreated={upsert} />
      <div className="toolbar">
        <label htmlFor="status-filter">Status</label>
        <select id="status-filter" value={status} onChange={(e) => setStatus(e.target.value)}>
          <option value="">All statuses</option>
          {PAYMENT_STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </div>
      <ErrorAlert error={result.error ?? events.error} />
      {rows
        .filter((r) => r.status === 'PENDING' && r.paymentMethod === 'MULTICAIXA_EXPRESS')
        .map((r) => (
          <WatchRow key={r.id} id={r.id} onUpdate={upsert} />
        ))}
      {result.fetching && !result.data ? (
        <Loading what="payments" />
      ) : (
        <table className="data">
          <caption>Payments</caption>
          <thead>
            <tr>
              <th scope="col">Payment</th>
              <th scope="col">Amount</th>
              <th scope="col">Method</th>
              <th scope="col">Status</th>
              <th scope="col" className="wide-only">
                Created
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.id} data-id={r.id}>
                <th scope="row">
                  <Link href={`${BASE}/payments/${encodeURIComponent(r.id)}`}>{r.id}</Link>
                </th>
                <td className="nowrap">{formatAmount(r.amount, r.currency)}</td>
                <td>{r.paymentMethod === 'MULTICAIXA_REFERENCE' ? 'Reference' : r.paymentMethod === 'MULTICAIXA_EXPRESS' ? 'Express' : formatEnum(r.paymentMethod)}</td>
                <td>
                  <StatusBadge status={r.status} />
                </td>
                <td className="wide-only">{formatTime(r.createdAt)}</td>
              </tr>
            ))}
            {rows.length === 0 && (
              <tr>
                <td colSpan={5}>No payments{status ? ` with status ${status}` : ''} yet.</td>
              </tr>
            )}
          </tbody>
        </table>
      )}
    </Page>
  );
}

function WatchRow({ id, onUpdate }: { id: string; onUpdate: (row: PaymentRow) => void }) {
  useSubscription({ query: INTENT_UPDATED, variables: { id } }, (_prev: unknown, data: any) => {
    onUpdate(data.paymentIntentUpdated.paymentIntent);
    return data;
  });
  return null;
}

function NewTestPayment({ onCreated }: { onCreated: (row: PaymentRow) => void }) {
  const [scenario, setScenario] = useState(SCENARIOS[0]!.value);
  const [amount, setAmount] = useState('5000');
  const [created, setCreated] = useState<PaymentRow | null>(null);
  const [state, create] = useMutation(CREATE);

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
    const intent = res.data?.createPaymentIntent as PaymentRow | undefined;
    setCreated(intent ?? null);
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
            Created <Link href={`${BASE}/payments/${encodeURIComponent(created.id)}`}>{created.id}</Link>
            {created.reference ? ` (reference ${created.reference.entity} ${created.reference.number})` : ''}.
          </>
        )}
      </p>
    </form>
  );
}
