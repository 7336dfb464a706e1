// GraphQL subscriptions over SSE on POST /graphql (graphql-sse protocol, distinct connections mode),
// through the real clients: graphql-sse's own, and urql forwarding to it (urql's documented way).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as UrqlClient, subscriptionExchange } from '@urql/core';
import { print } from 'graphql-sse';
import { createAccount, type TestAccount } from '../support/accounts';
import { sharedGateway, type TestServer } from '../support/server';
import { errorCodes, gql } from './support';
import { follow, payReference, referencePayment, sseClient, statusOf, UPDATES, within } from './httpSubscriptionSupport';

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

describe('GraphQL over SSE', () => {
  it("graphql-sse's client follows a payment from PENDING to SUCCEEDED", async () => {
    const payment = await referencePayment(acct);
    const client = sseClient(baseUrl, acct.sk);
    const sub = follow((sink) => client.subscribe({ query: UPDATES, variables: { id: payment.id } }, sink));
    try {
      const snapshot = await sub.until((m) => m.data?.paymentIntentUpdated.snapshot === true);
      expect(statusOf(snapshot)).toBe('PENDING');
      await payReference(acct, payment);
      const succeeded = await sub.until((m) => m.data?.paymentIntentUpdated.eventType === 'PAYMENT_SUCCEEDED');
      expect(statusOf(succeeded)).toBe('SUCCEEDED');
      expect(sub.results.every((m) => !m.errors)).toBe(true);
    } finally {
      sub.stop();
      client.dispose();
    }
  });

  it('urql, with subscriptionExchange forwarding to graphql-sse, sees the status change', async () => {
    const payment = await referencePayment(acct);
    const sse = sseClient(baseUrl, acct.sk);
    const urql = new UrqlClient({
      url: `${baseUrl}/graphql`,
      exchanges: [
        subscriptionExchange({
          forwardSubscription: (request) => ({
            subscribe: (sink) => ({ unsubscribe: sse.subscribe({ ...request, query: request.query ?? '' }, sink) }),
          }),
        }),
      ],
    });
    const sub = follow((sink) => {
      const { unsubscribe } = urql.subscription(UPDATES, { id: payment.id }).subscribe((result) => sink.next({ data: result.data, errors: result.error?.graphQLErrors }));
      return unsubscribe;
    });
    try {
      await sub.until((m) => m.data?.paymentIntentUpdated.snapshot === true);
      await payReference(acct, payment);
      await sub.until((m) => statusOf(m) === 'SUCCEEDED');
      expect(sub.results.map(statusOf)).toContain('PENDING');
    } finally {
      sub.stop();
      sse.dispose();
    }
  });

  it('frames events as the protocol says: next events, and complete with an empty data field', async () => {
    // A validation error: the protocol sends it through the accepted stream, then completes.
    const res = await fetch(`${baseUrl}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acct.sk}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription { paymentIntentUpdated(id: "pi_x") { nope } }' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await within('the end of the stream', res.text());
    const events = text.split('\n\n').filter((e) => e && !e.startsWith(':'));
    expect(events).toHaveLength(2);
    expect(events[0]).toMatch(/^event: next\ndata: \{/);
    const result = JSON.parse(events[0]!.slice('event: next\ndata: '.length));
    expect(result.errors[0].extensions.code).toBe('invalid_request');
    expect(result.errors[0].extensions.request_id).toMatch(/^req_/);
    expect(`${events[1]}\n\n`).toBe(print({ event: 'complete', data: null }));
  });

  it('streams a subscription sent as GET too (no mutation ever runs over GET)', async () => {
    const payment = await referencePayment(acct);
    const search = new URLSearchParams({ query: UPDATES, variables: JSON.stringify({ id: payment.id }) });
    const abort = new AbortController();
    const res = await fetch(`${baseUrl}/graphql?${search}`, { headers: { authorization: `Bearer ${acct.sk}`, accept: 'text/event-stream' }, signal: abort.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('"snapshot":true')) text += new TextDecoder().decode((await within('the snapshot', reader.read())).value);
    abort.abort();
    expect(text).toContain(`"id":"${payment.id}"`);
  });

  it('a subscription sent for JSON is a 400 invalid_request naming both Accept values and the WebSocket', async () => {
    const res = await gql(baseUrl, acct.sk, UPDATES, { id: 'pi_none' });
    expect(res.status).toBe(400);
    expect(errorCodes(res)).toEqual(['invalid_request']);
    const message = res.body.errors![0]!.message;
    expect(message).toContain('text/event-stream');
    expect(message).toContain('multipart/mixed;subscriptionSpec=1.0');
    expect(message).toContain('WebSocket');
  });

  it("a resolver's refusal (another account's payment) comes as a next with the error, then the end", async () => {
    const other = await createAccount(baseUrl);
    const payment = await referencePayment(other);
    const client = sseClient(baseUrl, acct.sk);
    const sub = follow((sink) => client.subscribe({ query: UPDATES, variables: { id: payment.id } }, sink));
    try {
      expect(await within('the end', sub.ended)).toEqual({ complete: true });
      expect(sub.results[0]?.errors?.[0]?.extensions?.code).toBe('resource_not_found');
    } finally {
      client.dispose();
    }
  });

  it('refuses before streaming with the JSON envelope and the REST status: no key 401', async () => {
    const res = await fetch(`${baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: UPDATES, variables: { id: 'pi_x' } }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await res.json()).errors[0].extensions.code).toBe('authentication_failed');
  });

  it('a key revoked while its stream is open ends it with authentication_failed', async () => {
    const own = await createAccount(baseUrl);
    const key = await own.api.post('/api_keys', { name: 'revoked soon', permissions: ['payment_intents:read'] });
    expect(key.status, key.text).toBe(201);
    const payment = await referencePayment(own);
    const client = sseClient(baseUrl, key.body.secret);
    const sub = follow((sink) => client.subscribe({ query: UPDATES, variables: { id: payment.id } }, sink));
    try {
      await sub.until((m) => m.data?.paymentIntentUpdated.snapshot === true);
      const revoked = await own.api.delete(`/api_keys/${key.body.id}`);
      expect(revoked.status, revoked.text).toBeLessThan(300);
      expect(await within('the end after revocation', sub.ended)).toEqual({ complete: true });
      expect(sub.results.at(-1)?.errors?.[0]?.extensions?.code).toBe('authentication_failed');
    } finally {
      client.dispose();
    }
  });
});
