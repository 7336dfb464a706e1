// An Apollo Client 4 app against the gateway (issue 56): its HttpLink, its normalized InMemoryCache
// (by `__typename` and `id`), relayStylePagination merging the pages of `paymentIntents`, and the
// errors it raises from the gateway's answers, over real HTTP. Core entry points only (no React).
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApolloClient, CombinedGraphQLErrors, gql, HttpLink, InMemoryCache, type TypedDocumentNode } from '@apollo/client';
import { relayStylePagination } from '@apollo/client/utilities';
import { createAccount, idempotencyKey } from '../support/accounts';
import { createPayments } from '../support/payments';
import { sharedGateway, type TestServer } from '../support/server';
import { until } from './support';

let server: TestServer;

beforeAll(async () => {
  server = await sharedGateway();
});

/** The client a frontend builds, with a count of the requests it sends. */
function apolloClient(key: string) {
  const sent = { count: 0 };
  const countingFetch: typeof fetch = (input, init) => {
    sent.count++;
    return fetch(input, init);
  };
  const client = new ApolloClient({
    link: new HttpLink({ uri: `${server.baseUrl}/graphql`, headers: { authorization: `Bearer ${key}` }, fetch: countingFetch }),
    cache: new InMemoryCache({
      typePolicies: {
        Query: {
          fields: {
            paymentIntents: relayStylePagination(['status', 'filter']),
            // paymentIntent(id) is the PaymentIntent of that id wherever the cache got it from (the
            // cache redirect of Apollo's docs); an answer of its own, null included, stands.
            paymentIntent: { read: (existing, { args, toReference }) => (existing !== undefined ? existing : toReference({ __typename: 'PaymentIntent', id: args?.id })) },
          },
        },
      },
    }),
  });
  return { client, sent };
}

// Apollo reports what it cannot store (a missing field or __typename, data it would lose) through
// console.error/warn: an app would see it, so a test of the gateway's answers fails on it.
let apolloWarnings: unknown[][];
beforeEach(() => {
  apolloWarnings = [];
  for (const method of ['error', 'warn'] as const) vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void apolloWarnings.push(args));
});
afterEach(() => {
  vi.restoreAllMocks();
  expect(apolloWarnings).toEqual([]);
});

/** What a row of the payments screen shows, in the list and on its own. */
const PAYMENT_ROW = gql`
  fragment PaymentRow on PaymentIntent {
    id
    amount
    status
  }
`;

const PAYMENTS: TypedDocumentNode<any, Record<string, unknown>> = gql`
  query Payments($first: Int!, $after: String) {
    paymentIntents(first: $first, after: $after) {
      edges {
        cursor
        node {
          ...PaymentRow
        }
      }
      pageInfo {
        hasNextPage
        hasPreviousPage
        startCursor
        endCursor
      }
    }
  }
  ${PAYMENT_ROW}
`;

const PAYMENT: TypedDocumentNode<any, Record<string, unknown>> = gql`
  query Payment($id: ID!) {
    paymentIntent(id: $id) {
      ...PaymentRow
    }
  }
  ${PAYMENT_ROW}
`;

const CREATE_PAYMENT: TypedDocumentNode<any, Record<string, unknown>> = gql`
  mutation CreatePayment($input: CreatePaymentIntentInput!, $key: String!) {
    createPaymentIntent(input: $input, idempotencyKey: $key) {
      ...PaymentRow
    }
  }
  ${PAYMENT_ROW}
`;

const CANCEL_PAYMENT: TypedDocumentNode<any, Record<string, unknown>> = gql`
  mutation CancelPayment($id: ID!) {
    cancelPaymentIntent(id: $id) {
      id
      status
    }
  }
`;

describe('paymentIntents with relayStylePagination', () => {
  it('fetchMore merges the pages into one list, newest first, each payment once', async () => {
    const acct = await createAccount(server.baseUrl, 'apollo pages');
    const newestFirst = (await createPayments(acct.api, 5)).reverse();
    const { client, sent } = apolloClient(acct.sk);
    const observable = client.watchQuery({ query: PAYMENTS, variables: { first: 2 } });
    const emitted: any[] = [];
    const subscription = observable.subscribe((result) => emitted.push(result.data));
    const shown = (count: number) => until(async () => emitted.find((data) => data?.paymentIntents?.edges.length === count), 30_000);

    let list = (await shown(2)).paymentIntents;
    expect(list.edges.map((e: any) => e.node.id)).toEqual(newestFirst.slice(0, 2));
    for (const count of [4, 5]) {
      expect(list.pageInfo.hasNextPage).toBe(true);
      const page = await observable.fetchMore({ variables: { after: list.pageInfo.endCursor } });
      expect(page.data?.paymentIntents.edges.length).toBe(count - list.edges.length);
      list = (await shown(count)).paymentIntents;
    }
    expect(list.edges.map((e: any) => e.node.id)).toEqual(newestFirst);
    expect(list.edges.map((e: any) => e.cursor)).toEqual(newestFirst);
    expect(list.edges.map((e: any) => e.node.amount)).toEqual([5000, 4000, 3000, 2000, 1000]);
    expect(list.pageInfo).toMatchObject({ hasNextPage: false, startCursor: newestFirst[0], endCursor: newestFirst[4] });
    expect(sent.count).toBe(3);
    // Each payment is one normalized object, which paymentIntent(id) then reads without a request.
    expect((client.cache.extract() as Record<string, unknown>)[`PaymentIntent:${newestFirst[2]}`]).toMatchObject({ __typename: 'PaymentIntent', id: newestFirst[2], amount: 3000 });
    const one = await client.query({ query: PAYMENT, variables: { id: newestFirst[2] } });
    expect(one.data?.paymentIntent).toEqual({ __typename: 'PaymentIntent', id: newestFirst[2], amount: 3000, status: 'PENDING' });
    expect(sent.count).toBe(3);
    subscription.unsubscribe();
  });
});

describe('mutations', () => {
  it('createPaymentIntent and cancelPaymentIntent update the cached payment by its id', async () => {
    const acct = await createAccount(server.baseUrl, 'apollo mutations');
    const { client, sent } = apolloClient(acct.sk);
    const key = idempotencyKey();
    const input = { amount: 7000, currency: 'AOA', paymentMethod: 'MULTICAIXA_EXPRESS', customer: { mobile: '923000000' } };
    const created = await client.mutate({ mutation: CREATE_PAYMENT, variables: { input, key } });
    const payment = created.data?.createPaymentIntent;
    expect(payment).toMatchObject({ __typename: 'PaymentIntent', amount: 7000, status: 'PENDING' });
    // The same idempotency key and input: the same payment, as REST's Idempotency-Key.
    const again = await client.mutate({ mutation: CREATE_PAYMENT, variables: { input, key } });
    expect(again.data?.createPaymentIntent.id).toBe(payment.id);
    expect(sent.count).toBe(2);

    // A screen showing the payment reads it from the cache the mutation filled...
    const observable = client.watchQuery({ query: PAYMENT, variables: { id: payment.id } });
    const emitted: any[] = [];
    const subscription = observable.subscribe((result) => emitted.push(result.data?.paymentIntent));
    expect((await until(async () => emitted.find((p) => p?.status === 'PENDING'), 30_000)).id).toBe(payment.id);
    expect(sent.count).toBe(2);
    // ...and shows the cancellation the next mutation answers, through the same normalized object.
    const cancelled = await client.mutate({ mutation: CANCEL_PAYMENT, variables: { id: payment.id } });
    expect(cancelled.data?.cancelPaymentIntent).toEqual({ __typename: 'PaymentIntent', id: payment.id, status: 'CANCELLED' });
    expect(await until(async () => emitted.find((p) => p?.status === 'CANCELLED'), 30_000)).toEqual({ __typename: 'PaymentIntent', id: payment.id, amount: 7000, status: 'CANCELLED' });
    expect(sent.count).toBe(3);
    subscription.unsubscribe();
    // The gateway agrees.
    expect((await acct.api.get(`/payment_intents/${payment.id}`)).body.status).toBe('CANCELLED');
  });
});

describe('errors', () => {
  it("an invalid key: the gateway's 401 read as CombinedGraphQLErrors, its code in extensions", async () => {
    const { client } = apolloClient('sk_test_not_a_real_key_000000000000');
    const err = await client.query({ query: PAYMENTS, variables: { first: 2 } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    // Apollo Client 4 asks for application/graphql-response+json first; the gateway answers its refusals
    // in that type, under which Apollo reads a 4xx body's errors (under application/json it would throw
    // a ServerError holding only the text).
    expect(CombinedGraphQLErrors.is(err), String(err)).toBe(true);
    expect((err as CombinedGraphQLErrors).errors.map((e) => e.extensions?.code)).toEqual(['authentication_failed']);
  });

  it("an unknown payment: CombinedGraphQLErrors with the field's code, or null data with errorPolicy all", async () => {
    const acct = await createAccount(server.baseUrl, 'apollo errors');
    const { client } = apolloClient(acct.sk);
    const id = 'pay_000000000000000000000000';
    const err = await client.query({ query: PAYMENT, variables: { id }, fetchPolicy: 'network-only' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(CombinedGraphQLErrors.is(err), String(err)).toBe(true);
    const graphQLErrors = (err as CombinedGraphQLErrors).errors;
    expect(graphQLErrors.map((e) => [e.path, e.extensions?.code])).toEqual([[['paymentIntent'], 'resource_not_found']]);

    const all = await client.query({ query: PAYMENT, variables: { id }, fetchPolicy: 'network-only', errorPolicy: 'all' });
    expect(all.data).toEqual({ paymentIntent: null });
    expect(CombinedGraphQLErrors.is(all.error)).toBe(true);
    expect((all.error as CombinedGraphQLErrors).errors[0]?.extensions?.code).toBe('resource_not_found');
  });
});
