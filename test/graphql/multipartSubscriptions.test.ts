// GraphQL subscriptions over Apollo's multipart HTTP protocol on POST /graphql: Apollo Client 4 (whose
// HttpLink sends subscriptions that way by default), and the framing itself read off the wire.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApolloClient, HttpLink, InMemoryCache, gql as apolloGql } from '@apollo/client';
import { createAccount, type TestAccount } from '../support/accounts';
import { sharedGateway, type TestServer } from '../support/server';
import { mintToken } from '../clientTokens/support';
import { follow, payReference, referencePayment, statusOf, UPDATES, within, type UpdateResult } from './httpSubscriptionSupport';

let server: TestServer;
let baseUrl: string;
let acct: TestAccount;

beforeAll(async () => {
  server = await sharedGateway();
  baseUrl = server.baseUrl;
  acct = await createAccount(baseUrl);
});
afterAll(async () => {
  await server?.stop();
});

const ACCEPT = 'multipart/mixed;boundary="graphql";subscriptionSpec="1.0",application/json';

function apollo(bearer: string): ApolloClient {
  return new ApolloClient({ link: new HttpLink({ uri: `${baseUrl}/graphql`, headers: { authorization: `Bearer ${bearer}` } }), cache: new InMemoryCache() });
}

/** Apollo Client's results as the helpers read them: data, and its error's GraphQL errors. */
function followApollo(client: ApolloClient, id: string) {
  return follow((sink) => {
    const subscription = client.subscribe({ query: apolloGql(UPDATES), variables: { id } }).subscribe({
      next: (r: any) => sink.next({ data: r.data, errors: r.error ? (r.error.errors ?? [r.error]) : undefined } as UpdateResult),
      error: sink.error,
      complete: sink.complete,
    });
    return () => subscription.unsubscribe();
  });
}

/** A multipart body read as it comes: its parts so far, and whether the close delimiter came. */
function partsOf(res: Response) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let ended = false;
  // A part is whole once the delimiter after it came: the text after the last one is not (or is the close).
  const parts = () => text.split('\r\n--graphql').slice(1, -1).map((p) => p.slice(p.indexOf('\r\n\r\n') + 4));
  const closed = () => text.endsWith('\r\n--graphql--\r\n');
  return {
    parts,
    closed,
    /** Reads until `until(parts)` holds or the body ends. */
    async read(until: (parts: string[]) => boolean): Promise<string[]> {
      while (!until(parts()) && !ended) {
        const { value, done } = await reader.read();
        if (value) text += decoder.decode(value, { stream: true });
        ended = done;
      }
      return parts();
    },
    cancel: () => reader.cancel().catch(() => undefined),
  };
}

function subscribeRaw(bearer: string, id: string, signal?: AbortSignal): Promise<Response> {
  return fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', accept: ACCEPT },
    body: JSON.stringify({ query: UPDATES, variables: { id } }),
    signal,
  });
}

describe('multipart subscriptions', () => {
  it('Apollo Client 4 follows a payment from PENDING to SUCCEEDED', async () => {
    const payment = await referencePayment(acct);
    const client = apollo(acct.sk);
    const sub = followApollo(client, payment.id);
    try {
      const snapshot = await sub.until((m) => m.data?.paymentIntentUpdated.snapshot === true);
      expect(statusOf(snapshot)).toBe('PENDING');
      await payReference(acct, payment);
      await sub.until((m) => m.data?.paymentIntentUpdated.eventType === 'PAYMENT_SUCCEEDED');
      expect(sub.results.every((m) => !m.errors)).toBe(true);
    } finally {
      sub.stop();
      client.stop();
    }
  });

  it('frames parts as Apollo does, with {} heartbeats while nothing changes', async () => {
    const payment = await referencePayment(acct);
    const abort = new AbortController();
    const res = await subscribeRaw(acct.sk, payment.id, abort.signal);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('multipart/mixed;boundary="graphql";subscriptionSpec="1.0"');
    // The heartbeat comes every 5 s: wait generously for one after the snapshot.
    const body = partsOf(res);
    const parts = await within('a heartbeat', body.read((ps) => ps.includes('{}')), 30_000);
    abort.abort();
    const first = JSON.parse(parts[0]!);
    expect(first.payload.data.paymentIntentUpdated).toMatchObject({ snapshot: true, paymentIntent: { id: payment.id, status: 'PENDING' } });
    expect(parts).toContain('{}');
  });

  it("a client token's stream ends with a transport error once the token is revoked", async () => {
    const payment = await referencePayment(acct);
    const minted = await mintToken(acct, payment.id);
    const res = await subscribeRaw(minted.token, payment.id);
    expect(res.status).toBe(200);
    const body = partsOf(res);
    const [snapshot] = await within('the snapshot', body.read((ps) => ps.length > 0));
    expect(JSON.parse(snapshot!).payload.data.paymentIntentUpdated.snapshot).toBe(true);
    expect((await acct.api.delete(`/client_tokens/${minted.id}`)).status).toBe(200);
    const parts = await within('the end after revocation', body.read(() => false));
    expect(body.closed()).toBe(true);
    const last = JSON.parse(parts.at(-1)!);
    expect(last.payload).toBeNull();
    expect(last.errors[0].extensions.code).toBe('authentication_failed');
  });
});
