import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, idempotencyKey, type TestAccount } from '../support/accounts';
import { type TestServer } from '../support/server';
import { collect, errorCodes, gql, gqlData, startGraphqlTestServer, wsClient } from './support';

/**
 * Issue 16: what the cost limit lets through is still stopped while running, by the response size cap
 * and the execution deadline, over HTTP and over WebSocket, with one clear `invalid_request` error. Each
 * gateway here has a small value of one limit (GRAPHQL_MAX_RESPONSE_BYTES, GRAPHQL_DEADLINE_MS).
 */

/** A gateway started with `env`, and an account on it, for the tests of one describe block. */
function gatewayWith(env: Record<string, string>): { server: TestServer; acct: TestAccount } {
  const state = {} as { server: TestServer; acct: TestAccount };
  beforeAll(async () => {
    state.server = await startGraphqlTestServer(env);
    state.acct = await createAccount(state.server.baseUrl);
  });
  afterAll(async () => {
    await state.server?.stop();
  });
  return state;
}

describe('response size cap (GRAPHQL_MAX_RESPONSE_BYTES = 1024)', () => {
  const gateway = gatewayWith({ GRAPHQL_MAX_RESPONSE_BYTES: '1024' });

  it('answers one error instead of an HTTP answer over the cap, and the answer itself when under it', async () => {
    const link = await gateway.acct.api.post('/payment_links', { amount: 5000 });
    const small = await gqlData(gateway.server.baseUrl, gateway.acct.sk, 'query($id: ID!) { paymentLink(id: $id) { id code } }', { id: link.body.id });
    expect(small.paymentLink.code).toBe(link.body.code);
    const res = await gql(gateway.server.baseUrl, gateway.acct.sk, 'query($id: ID!) { paymentLink(id: $id) { qrSvg } }', { id: link.body.id });
    expect(res.status).toBe(400);
    expect(errorCodes(res)).toEqual(['invalid_request']);
    expect(res.body.errors?.[0]?.message).toMatch(/^Response too large: \d+ bytes, at most 1024/);
    expect(res.body.errors?.[0]?.extensions?.request_id).toMatch(/^req_/);
    expect(res.body.data).toBeUndefined();
  });

  it('holds each WebSocket message to the cap: a query and a subscription snapshot', async () => {
    const link = await gateway.acct.api.post('/payment_links', { amount: 5000 });
    const metadata = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, 'x'.repeat(500)]));
    const intent = await gateway.acct.api.post('/payment_intents', { amount: 1000, currency: 'AOA', payment_method: 'multicaixa_reference', metadata }, { idempotencyKey: idempotencyKey() });
    const client = wsClient(gateway.server.baseUrl, gateway.acct.sk);
    try {
      const [query] = await collect(client, 'query($id: ID!) { paymentLink(id: $id) { qrSvg } }', { id: link.body.id }, (m) => m.length > 0);
      expect(query?.data).toBeUndefined();
      expect(query?.errors?.map((e) => e.extensions?.code)).toEqual(['invalid_request']);
      expect(query?.errors?.[0]?.message).toMatch(/^Response too large/);
      const [snapshot] = await collect(client, 'subscription($id: ID!) { paymentIntentUpdated(id: $id) { snapshot paymentIntent { metadata } } }', { id: intent.body.id }, (m) => m.length > 0);
      expect(snapshot?.errors?.[0]?.message).toMatch(/^Response too large/);
      // A message under the cap goes through on the same connection.
      const [ok] = await collect(client, 'subscription($id: ID!) { paymentIntentUpdated(id: $id) { snapshot paymentIntent { id } } }', { id: intent.body.id }, (m) => m.length > 0);
      expect(ok?.data?.paymentIntentUpdated).toEqual({ snapshot: true, paymentIntent: { id: intent.body.id } });
    } finally {
      await client.dispose();
    }
  });
});

describe('execution deadline (GRAPHQL_DEADLINE_MS = 0: no resolver may start)', () => {
  const gateway = gatewayWith({ GRAPHQL_DEADLINE_MS: '0' });

  it('answers one error over HTTP, with no partial data', async () => {
    const res = await gql(gateway.server.baseUrl, gateway.acct.sk, '{ account { id } paymentIntents(first: 5) { nodes { id } } }');
    expect(res.status).toBe(400);
    expect(errorCodes(res)).toEqual(['invalid_request']);
    expect(res.body.errors?.[0]?.message).toMatch(/^Query took too long: execution was stopped after 0 ms/);
    expect(res.body.data).toBeUndefined();
  });

  it('answers one error over WebSocket', async () => {
    const client = wsClient(gateway.server.baseUrl, gateway.acct.sk);
    try {
      const [message] = await collect(client, '{ account { id } }', {}, (m) => m.length > 0);
      expect(message?.data).toBeUndefined();
      expect(message?.errors?.map((e) => e.extensions?.code)).toEqual(['invalid_request']);
      expect(message?.errors?.[0]?.message).toMatch(/^Query took too long/);
    } finally {
      await client.dispose();
    }
  });
});
