// A client token's subscription over SSE on POST /graphql (what a merchant's frontend would open): it
// runs the same resolvers as over graphql-ws, so it ends when the token is revoked or expires (the
// resolver's error as a `next`, then `complete`) and when the payment's outcome is known.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../support/accounts';
import { advanceClock } from '../support/payments';
import { sharedGateway, type TestServer } from '../support/server';
import { mintToken } from '../clientTokens/support';
import { follow, payReference, referencePayment, sseClient, statusOf, within } from './httpSubscriptionSupport';

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

// A token selects the public view only (clientTokenScope.ts).
const PUBLIC_UPDATES = 'subscription($id: ID!) { paymentIntentUpdated(id: $id) { snapshot paymentIntent { id status } } }';

function subscribeWithToken(token: string, paymentId: string) {
  const client = sseClient(baseUrl, token);
  const sub = follow((sink) => client.subscribe({ query: PUBLIC_UPDATES, variables: { id: paymentId } }, sink));
  return { client, sub };
}

describe("a client token's subscription over SSE", () => {
  it('ends with authentication_failed, then complete, once the token is revoked', async () => {
    const payment = await referencePayment(acct);
    const minted = await mintToken(acct, payment.id);
    const { client, sub } = subscribeWithToken(minted.token, payment.id);
    try {
      await sub.until((m) => m.data?.paymentIntentUpdated.snapshot === true);
      expect((await acct.api.delete(`/client_tokens/${minted.id}`)).status).toBe(200);
      expect(await within('the end after revocation', sub.ended)).toEqual({ complete: true });
      expect(sub.results.at(-1)?.errors?.[0]?.extensions?.code).toBe('authentication_failed');
    } finally {
      client.dispose();
    }
  });

  it('ends the same way once the token expires on the account clock', async () => {
    const own = await createAccount(baseUrl);
    const payment = await referencePayment(own);
    const minted = await mintToken(own, payment.id, 60);
    const { client, sub } = subscribeWithToken(minted.token, payment.id);
    try {
      await sub.until((m) => m.data?.paymentIntentUpdated.snapshot === true);
      await advanceClock(own.api, 61);
      expect(await within('the end after expiry', sub.ended)).toEqual({ complete: true });
      expect(sub.results.at(-1)?.errors?.[0]?.extensions?.code).toBe('authentication_failed');
    } finally {
      client.dispose();
    }
  });

  it("completes once the payment's outcome is known, as the public stream does", async () => {
    const payment = await referencePayment(acct);
    const minted = await mintToken(acct, payment.id);
    const { client, sub } = subscribeWithToken(minted.token, payment.id);
    try {
      await sub.until((m) => m.data?.paymentIntentUpdated.snapshot === true);
      await payReference(acct, payment);
      expect(await within('the end at the outcome', sub.ended)).toEqual({ complete: true });
      expect(statusOf(sub.results.at(-1)!)).toBe('SUCCEEDED');
      expect(sub.results.every((m) => !m.errors)).toBe(true);
    } finally {
      client.dispose();
    }
  });

  it('is refused before streaming for another payment (the JSON envelope, as every token refusal)', async () => {
    const payment = await referencePayment(acct);
    const other = await referencePayment(acct);
    const minted = await mintToken(acct, payment.id);
    const res = await fetch(`${baseUrl}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${minted.token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: PUBLIC_UPDATES, variables: { id: other.id } }),
    });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await res.json();
    // The house rule for a token used on another payment: 401, as on the REST read and stream.
    expect([res.status, body.errors[0].extensions.code]).toEqual([401, 'authentication_failed']);
  });
});
