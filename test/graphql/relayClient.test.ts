// A Relay app against the gateway (issue 56): relay-runtime's own network layer, normalizing store and
// ConnectionHandler consume the gateway's answers, over real HTTP. The artifacts are the ones the
// Relay compiler would generate (relayArtifacts.ts): what usePaginationFragment and
// useRefetchableFragment run, without React.
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  commitLocalUpdate,
  ConnectionHandler,
  createOperationDescriptor,
  createReaderSelector,
  Environment,
  fetchQuery,
  Network,
  RecordSource,
  ROOT_ID,
  Store,
  type ConcreteRequest,
  type FetchFunction,
  type ReaderFragment,
  type Snapshot,
  type Variables,
} from 'relay-runtime';
import { createAccount, idempotencyKey, type TestAccount } from '../support/accounts';
import { advanceClock, createPayment, createPayments, expressBody } from '../support/payments';
import { sharedGateway, type TestServer } from '../support/server';
import {
  PAYMENTS_CONNECTION_KEY,
  PaymentList_query,
  PaymentListPaginationQuery,
  PaymentStatus_payment,
  PaymentStatusQuery,
  PaymentStatusRefetchQuery,
  REFUNDS_CONNECTION_KEY,
  RefundList_payment,
  RefundListPaginationQuery,
  RefundListQuery,
} from './relayArtifacts';

let server: TestServer;

beforeAll(async () => {
  server = await sharedGateway();
});

/** What a Relay app sets up: its network (POST /graphql with the key) and a fresh normalized store. */
function relayEnvironment(key: string): Environment {
  const fetchFn: FetchFunction = async (params, variables) => {
    const res = await fetch(`${server.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query: params.text, variables }),
    });
    return res.json();
  };
  return new Environment({ network: Network.create(fetchFn), store: new Store(new RecordSource()) });
}

/** Fetches an operation as a Relay app's query does: retained (not garbage collected), network-only. */
async function fetchRetained(environment: Environment, query: ConcreteRequest, variables: Variables): Promise<void> {
  environment.retain(createOperationDescriptor(query, variables));
  await fetchQuery(environment, query, variables, { fetchPolicy: 'network-only' }).toPromise();
}

/** Reads a fragment from the store at a record, as useFragment does. */
function readFragment(environment: Environment, fragment: ReaderFragment, dataID: string, query: ConcreteRequest, variables: Variables): Snapshot {
  return environment.lookup(createReaderSelector(fragment, dataID, variables, createOperationDescriptor(query, variables).request));
}

/** The edges of a connection record ConnectionHandler keeps, read through ConnectionHandler itself. */
function connectionNodeIds(environment: Environment, parentID: string, key: string): string[] {
  let ids: string[] = [];
  commitLocalUpdate(environment, (store) => {
    const parent = store.get(parentID);
    const connection = parent && ConnectionHandler.getConnection(parent, key);
    ids = (connection?.getLinkedRecords('edges') ?? []).map((edge) => String(edge?.getLinkedRecord('node')?.getValue('id')));
  });
  return ids;
}

/**
 * usePaginationFragment's loadNext until the connection says there is no next page: `query` with the
 * connection's endCursor as `after`, the connection read again (`read`) after each. The merged
 * connection, and how many edges each page added (the first page already loaded).
 */
async function loadAll(environment: Environment, query: ConcreteRequest, variables: Variables, read: () => any): Promise<{ connection: any; pages: number[] }> {
  let connection = read();
  const pages = [connection.edges.length];
  while (connection.pageInfo.hasNextPage) {
    expect(pages.length, 'pages').toBeLessThan(5);
    await fetchRetained(environment, query, { ...variables, after: connection.pageInfo.endCursor });
    const next = read();
    pages.push(next.edges.length - connection.edges.length);
    connection = next;
  }
  return { connection, pages };
}

async function succeededPayment(acct: TestAccount, amount: number): Promise<string> {
  const intent = await createPayment(acct.api, expressBody('923000000', amount));
  await advanceClock(acct.api, 10);
  return intent.id;
}

// Relay's `warning` (a wrong `after` cursor, a missing field while normalizing) goes to console.error
// in development: a Relay app would see it, so a test of the gateway's answers fails on it.
let relayWarnings: unknown[][];
beforeEach(() => {
  relayWarnings = [];
  vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void relayWarnings.push(args));
});
afterEach(() => {
  vi.restoreAllMocks();
  expect(relayWarnings).toEqual([]);
});

describe('refetch through node(id:)', () => {
  it("updates the payment's one record in the store, and tells the fragment's subscriber", async () => {
    const acct = await createAccount(server.baseUrl, 'relay refetch');
    const intent = await createPayment(acct.api, expressBody('923000000', 4000));
    const id = intent.id as string;
    const environment = relayEnvironment(acct.sk);

    await fetchRetained(environment, PaymentStatusQuery, { id });
    const before = readFragment(environment, PaymentStatus_payment, id, PaymentStatusQuery, { id });
    expect(before.isMissingData).toBe(false);
    expect(before.data).toEqual({ id, status: intent.status, amount: 4000, amountRefunded: 0 });
    const seen: unknown[] = [];
    const subscription = environment.subscribe(before, (snapshot) => seen.push(snapshot.data));

    // The payment moves on over REST, and the screen refetches (useRefetchableFragment's refetch: the
    // generated query reads the payment again by node(id:)) after each change: it succeeds, then is
    // partly refunded (the refund succeeds ~3 s of sandbox time later).
    await advanceClock(acct.api, 10);
    await fetchRetained(environment, PaymentStatusRefetchQuery, { id });
    const refund = await acct.api.post('/refunds', { payment_intent: id, amount: 1500 }, { idempotencyKey: idempotencyKey() });
    expect(refund.status, refund.text).toBe(201);
    await advanceClock(acct.api, 10);
    await fetchRetained(environment, PaymentStatusRefetchQuery, { id });

    const after = { id, status: 'PARTIALLY_REFUNDED', amount: 4000, amountRefunded: 1500 };
    expect(seen).toEqual([{ id, status: 'SUCCEEDED', amount: 4000, amountRefunded: 0 }, after]);
    expect(readFragment(environment, PaymentStatus_payment, id, PaymentStatusQuery, { id }).data).toEqual(after);
    // One record, by id, of the concrete type the gateway named; the typed field and node point at it.
    const source = environment.getStore().getSource();
    expect(source.get(id)).toMatchObject({ __id: id, __typename: 'PaymentIntent', status: 'PARTIALLY_REFUNDED', amountRefunded: 1500 });
    expect(source.get(ROOT_ID)).toMatchObject({ [`paymentIntent(id:"${id}")`]: { __ref: id }, [`node(id:"${id}")`]: { __ref: id } });
    subscription.dispose();
  });

  it("an unknown id and another account's id: node is null, with the field's error", async () => {
    const acct = await createAccount(server.baseUrl, 'relay reader');
    const other = await createAccount(server.baseUrl, 'relay other');
    const othersPayment = await createPayment(other.api, expressBody('923000000', 2500));
    const environment = relayEnvironment(acct.sk);
    for (const id of ['pay_000000000000000000000000', othersPayment.id as string]) {
      await fetchRetained(environment, PaymentStatusRefetchQuery, { id });
      const operation = createOperationDescriptor(PaymentStatusRefetchQuery, { id });
      const snapshot = environment.lookup(operation.fragment);
      expect(snapshot.data, id).toEqual({ node: null });
      // Relay keeps the response's error on the field its `path` names (what @catch and
      // @throwOnFieldError read), with the gateway's code; reading the field reports it.
      // (Snapshot's typings predate `fieldErrors`.)
      expect((snapshot as Snapshot & { fieldErrors?: unknown }).fieldErrors, id).toEqual([
        expect.objectContaining({
          kind: 'relay_field_payload.error',
          owner: 'PaymentStatusRefetchQuery',
          error: expect.objectContaining({ message: expect.stringContaining(id), extensions: expect.objectContaining({ code: 'resource_not_found' }) }),
        }),
      ]);
      expect(environment.getStore().getSource().get(ROOT_ID)?.__errors, id).toMatchObject({ [`node(id:"${id}")`]: [{ extensions: { code: 'resource_not_found' } }] });
      expect(environment.getStore().getSource().get(id), id).toBeUndefined();
    }
  });
});

describe('pagination with ConnectionHandler', () => {
  it("merges the pages of a payment's refunds into one connection, oldest first, each once", async () => {
    const acct = await createAccount(server.baseUrl, 'relay refunds');
    const id = await succeededPayment(acct, 10_000);
    const refundIds: string[] = [];
    for (const amount of [100, 200, 300, 400, 500]) {
      const refund = await acct.api.post('/refunds', { payment_intent: id, amount }, { idempotencyKey: idempotencyKey() });
      expect(refund.status, refund.text).toBe(201);
      refundIds.push(refund.body.id);
    }
    const environment = relayEnvironment(acct.sk);
    // The screen's query loads the first page; loadNext runs the generated pagination query (node(id:)).
    await fetchRetained(environment, RefundListQuery, { id, first: 2, after: null });
    const { connection, pages } = await loadAll(environment, RefundListPaginationQuery, { id, first: 2 }, () =>
      (readFragment(environment, RefundList_payment, id, RefundListQuery, { id, first: 2, after: null }).data as any).refundsConnection,
    );
    expect(pages).toEqual([2, 2, 1]);
    expect(connection.edges.map((e: any) => e.node.id)).toEqual(refundIds);
    expect(connection.edges.map((e: any) => e.node.amount)).toEqual([100, 200, 300, 400, 500]);
    expect(connection.edges.map((e: any) => e.cursor)).toEqual(refundIds);
    expect(connection.pageInfo).toEqual({ endCursor: refundIds[4], hasNextPage: false });
    expect(connectionNodeIds(environment, id, REFUNDS_CONNECTION_KEY)).toEqual(refundIds);

    // Loading the first page again (a pull to refresh: no `after`) replaces the merged edges with it.
    await fetchRetained(environment, RefundListPaginationQuery, { id, first: 2, after: null });
    expect(connectionNodeIds(environment, id, REFUNDS_CONNECTION_KEY)).toEqual(refundIds.slice(0, 2));
  });

  it("pages the account's payments, newest first, into one connection on the root", async () => {
    const acct = await createAccount(server.baseUrl, 'relay payments');
    const created = await createPayments(acct.api, 5);
    const newestFirst = [...created].reverse();
    const environment = relayEnvironment(acct.sk);
    await fetchRetained(environment, PaymentListPaginationQuery, { first: 2, after: null });
    const { connection, pages } = await loadAll(environment, PaymentListPaginationQuery, { first: 2 }, () =>
      (readFragment(environment, PaymentList_query, ROOT_ID, PaymentListPaginationQuery, { first: 2, after: null }).data as any).paymentIntents,
    );
    expect(pages).toEqual([2, 2, 1]);
    expect(connection.edges.map((e: any) => e.node.id)).toEqual(newestFirst);
    expect(connection.edges.map((e: any) => e.node.amount)).toEqual([5000, 4000, 3000, 2000, 1000]);
    expect(connection.pageInfo).toEqual({ endCursor: newestFirst[4], hasNextPage: false });
    expect(connectionNodeIds(environment, ROOT_ID, PAYMENTS_CONNECTION_KEY)).toEqual(newestFirst);
    // The edges' nodes are the payments' own records: normalized by id, as node(id:) would find them.
    for (const id of created) expect(environment.getStore().getSource().get(id)).toMatchObject({ __typename: 'PaymentIntent', id });

    // A page that ends exactly at the last payment says so: no next page to ask for.
    const whole = relayEnvironment(acct.sk);
    await fetchRetained(whole, PaymentListPaginationQuery, { first: 5, after: null });
    const all = (readFragment(whole, PaymentList_query, ROOT_ID, PaymentListPaginationQuery, { first: 5, after: null }).data as any).paymentIntents;
    expect(all.edges.map((e: any) => e.node.id)).toEqual(newestFirst);
    expect(all.pageInfo).toEqual({ endCursor: newestFirst[4], hasNextPage: false });
  });
});
