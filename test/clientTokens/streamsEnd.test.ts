// A client token's open streams end once it is revoked (DELETE /v1/client_tokens/{id}) or expires: the
// public SSE stream (a comment, then the end) and the GraphQL subscription over a token's WebSocket (the
// error authentication_failed), on the gateway that revoked it and on another gateway process over the
// same database. Expiry follows the account's sandbox clock, so the clock is advanced past it.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { createAccount, type TestAccount } from '../support/accounts';
import { ApiClient } from '../support/client';
import { advanceClock, createPayment, referenceBody } from '../support/payments';
import { twoGatewaysOnOneDatabase } from '../support/twoGateways';
import { openSse, type SseClient } from '../streams/support/sseClient';
import { mintToken } from './support';

vi.setConfig({ testTimeout: 120_000 });

const gateways = twoGatewaysOnOneDatabase();
let acct: TestAccount;
beforeAll(async () => {
  acct = await createAccount(gateways.a.baseUrl);
});

/** The test's own bound on a wait (the contract is 1 s; timing is measured in bench/, not here). */
function within<T>(what: string, p: Promise<T>, ms = 10_000): Promise<T> {
  return Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms))]);
}

const UPDATES = 'subscription($id: ID!) { paymentIntentUpdated(id: $id) { snapshot paymentIntent { id status } } }';

interface TokenSubscription {
  client: Client;
  snapshot: Promise<void>;
  /** How the subscription ended: the error the client was given, or `complete`. */
  ended: Promise<{ error?: any; complete?: true }>;
}

/** graphql-ws, as a frontend uses it: the token in connection_init, no retries. */
function subscribeWithToken(baseUrl: string, token: string, paymentId: string): TokenSubscription {
  const client = createClient({
    url: `${baseUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { clientToken: token },
    retryAttempts: 0,
  });
  let snapshotSeen!: () => void;
  const snapshot = new Promise<void>((r) => (snapshotSeen = r));
  const ended = new Promise<{ error?: any; complete?: true }>((resolve) =>
    client.subscribe(
      { query: UPDATES, variables: { id: paymentId } },
      {
        next: (m: any) => {
          if (m.data?.paymentIntentUpdated?.snapshot) snapshotSeen();
        },
        error: (error) => resolve({ error }),
        complete: () => resolve({ complete: true }),
      },
    ),
  );
  return { client, snapshot, ended };
}

async function openBoth(baseUrl: string, token: string, paymentId: string): Promise<{ sse: SseClient; sub: TokenSubscription }> {
  const sse = await openSse(`${baseUrl}/v1/public/payments/${paymentId}/events?client_token=${token}`);
  expect(sse.status, sse.text).toBe(200);
  await sse.waitFor((m) => m.some((x) => x.event === 'snapshot'));
  const sub = subscribeWithToken(baseUrl, token, paymentId);
  await within('the subscription snapshot', sub.snapshot);
  return { sse, sub };
}

async function expectBothEnded(sse: SseClient, sub: TokenSubscription): Promise<void> {
  const [, how] = await Promise.all([within('the SSE stream end', sse.ended), within('the subscription end', sub.ended)]);
  expect(sse.comments).toContain('client token expired or revoked');
  // graphql-ws hands the operation's error to the sink: an array of GraphQL errors with the REST code.
  expect(how.complete).toBeUndefined();
  expect(how.error?.[0]?.extensions?.code, JSON.stringify(how.error)).toBe('authentication_failed');
  await sub.client.dispose();
}

describe.each([
  ['the gateway that revoked it', () => gateways.a.baseUrl],
  ['another gateway process on the same database', () => gateways.b.url],
])("a client token's streams on %s", (_where, url) => {
  it('end once the token is revoked; the token then opens nothing', async () => {
    const payment = await createPayment(acct.api, referenceBody());
    const minted = await mintToken(acct, payment.id);
    const { sse, sub } = await openBoth(url(), minted.token, payment.id);
    // Another token's stream of the same payment is not touched by this revocation.
    const keeper = await mintToken(acct, payment.id);
    const kept = await openSse(`${url()}/v1/public/payments/${payment.id}/events?client_token=${keeper.token}`);
    await kept.waitFor((m) => m.some((x) => x.event === 'snapshot'));
    expect(sse.isEnded()).toBe(false);

    expect((await acct.api.delete(`/client_tokens/${minted.id}`)).status).toBe(200);
    await expectBothEnded(sse, sub);
    expect(kept.isEnded()).toBe(false);
    kept.close();
    const again = await new ApiClient(url()).get(`/public/payments/${payment.id}/events?client_token=${minted.token}`);
    expect(again.status).toBe(401);
  });

  it('end once the token expires on the account clock', async () => {
    const own = await createAccount(gateways.a.baseUrl);
    const payment = await createPayment(own.api, referenceBody());
    const minted = await mintToken(own, payment.id, 60);
    const { sse, sub } = await openBoth(url(), minted.token, payment.id);
    expect(sse.isEnded()).toBe(false);

    // On gateway A: the other process learns of the advance from the account's stored offset.
    await advanceClock(own.api, 61);
    await expectBothEnded(sse, sub);
  });
});
