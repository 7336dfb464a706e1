import { useCallback, useMemo, useState } from 'react';
import { useMutation, useSubscription, type CombinedError } from 'urql';
import { describeError, useLiveQuery } from '../graphql';
import { byNewest, newer, type PaymentRow } from '../payments';
import { listPageFromQuery, listPageToQuery, type ListPage } from './urlFilters';
import { matchesSearch } from '../../../domain/payments/paymentSearchTerms';
import {
  DashboardPaymentCreateDocument,
  DashboardPaymentListDocument,
  DashboardPaymentListEventsDocument,
  DashboardPaymentListRowUpdatedDocument,
  type PaymentIntentFilter,
  type PaymentIntentStatus,
  type PaymentMethodCode,
} from '../../../../generated/dashboard/documents';

export const PAGE_SIZE = 50;

/** The Payments list's URL parameters, each a filter of the same name ('' = not set). */
export const FILTER_KEYS = ['search', 'status', 'method', 'from', 'to'] as const;

/** What the Payments page is narrowed to: `from` and `to` are days (YYYY-MM-DD, sandbox time, UTC), inclusive. */
export interface PaymentFilters extends Record<(typeof FILTER_KEYS)[number], string> {
  status: PaymentIntentStatus | '';
  method: PaymentMethodCode | '';
}

export type PaymentPage = ListPage<(typeof FILTER_KEYS)[number]>;

export const pageFromQuery = (query: URLSearchParams) => listPageFromQuery(FILTER_KEYS, query) as PaymentPage & { filters: PaymentFilters };
export const pageToQuery = (page: PaymentPage) => listPageToQuery(FILTER_KEYS, page);

const DAY_MS = 86_400_000;

/** The server's filter: dates become the start of `from`'s day and the end of `to`'s (createdTo is exclusive). */
export function toGraphqlFilter(f: PaymentFilters): PaymentIntentFilter {
  return {
    ...(f.search ? { search: f.search } : {}),
    ...(f.status ? { status: [f.status] } : {}),
    ...(f.method ? { paymentMethod: f.method } : {}),
    ...(f.from ? { createdFrom: `${f.from}T00:00:00.000Z` } : {}),
    ...(f.to ? { createdTo: new Date(Date.parse(`${f.to}T00:00:00.000Z`) + DAY_MS).toISOString() } : {}),
  };
}

/**
 * Whether a payment that arrived live belongs in the filtered list, by the server's rules (the search's
 * keys as paymentSearchTerms.ts reads them; dates on the sandbox clock).
 */
export function matchesFilters(row: PaymentRow, f: PaymentFilters): boolean {
  if (f.status && row.status !== f.status) return false;
  if (f.method && row.paymentMethod !== f.method) return false;
  if (f.from && row.createdAt < `${f.from}T00:00:00`) return false;
  if (f.to && row.createdAt.slice(0, 10) > f.to) return false;
  if (!f.search) return true;
  return matchesSearch({ id: row.id, merchantReference: row.merchantReference, mobile: row.customer?.mobile, referenceNumber: row.reference?.number }, f.search);
}

/**
 * One page of payments, kept current live: every event of the account carries the intent as it became;
 * on the first page a new payment that matches the filters appears at the top, on any page a row whose
 * status leaves the filter goes.
 */
export function usePaymentList({ filters, after }: { filters: PaymentFilters; after: string }) {
  const filter = useMemo(() => toGraphqlFilter(filters), [filters]);
  const [result] = useLiveQuery({ query: DashboardPaymentListDocument, variables: { first: PAGE_SIZE, after: after || null, filter } });
  // What arrived live since the list was read: merged over it, newest version of each intent wins.
  const [live, setLive] = useState<Map<string, PaymentRow>>(() => new Map());
  const upsert = useCallback((row: PaymentRow | null | undefined) => {
    if (!row) return;
    setLive((m) => new Map(m).set(row.id, newer(m.get(row.id), row)));
  }, []);
  const [events] = useSubscription({ query: DashboardPaymentListEventsDocument }, (_prev, data) => {
    upsert(data.events.paymentIntent ?? data.events.refund?.paymentIntent);
    return data;
  });

  const connection = result.data?.paymentIntents;
  const rows = useMemo(() => {
    const all = new Map<string, PaymentRow>();
    for (const row of connection?.nodes ?? []) all.set(row.id, row);
    for (const row of live.values()) {
      if (all.has(row.id)) all.set(row.id, newer(all.get(row.id), row));
      else if (!after) all.set(row.id, row);
    }
    return [...all.values()].filter((r) => matchesFilters(r, filters)).sort(byNewest).slice(0, PAGE_SIZE);
  }, [connection, live, after, filters]);

  return {
    rows,
    loaded: Boolean(connection),
    fetching: result.fetching,
    hasNextPage: connection?.pageInfo.hasNextPage ?? false,
    // The next page starts after the last row the server gave (a live row on top does not move it).
    endCursor: connection?.pageInfo.endCursor ?? null,
    error: result.error ?? events.error,
    upsert,
  };
}

/** Follows one payment on its own (PENDING → PROCESSING has no event). */
export function useRowUpdates(id: string, onUpdate: (row: PaymentRow) => void) {
  useSubscription({ query: DashboardPaymentListRowUpdatedDocument, variables: { id } }, (_prev, data) => {
    onUpdate(data.paymentIntentUpdated.paymentIntent);
    return data;
  });
}

export const useCreatePayment = () => useMutation(DashboardPaymentCreateDocument);

/** The labels the Payments page shows for the arguments the server's messages name. */
const FIELD_LABELS: Record<string, string> = { search: 'Search', status: 'Status', paymentMethod: 'Method', createdFrom: 'Created from', createdTo: 'Created to' };

/**
 * A refused read of the list in words for a person: the server's message with each argument it names
 * replaced by the field's label on screen (“Search” is too long…), without the error code. Any other
 * error (the network, the budget) is said as everywhere else.
 */
export function listErrorWords(error: CombinedError | undefined): string | undefined {
  const gql = error?.graphQLErrors[0];
  if (!error || !gql || gql.extensions?.code !== 'invalid_request') return error && describeError(error);
  if (/'after'/.test(gql.message)) return 'That page of payments is no longer there: go back to the first page.';
  return gql.message
    .replace(/^Invalid (field|filter|argument):?\s*/i, '')
    .replace(/'(\w+)'/g, (quoted, name: string) => (FIELD_LABELS[name] ? `“${FIELD_LABELS[name]}”` : quoted))
    .replace(/^./, (c) => c.toUpperCase());
}
