// A client token's `paymentIntentUpdated` subscription that its client leaves while the payment is
// waiting (nothing new to send) gives back its place on the event bus at once, over HTTP (GraphQL over
// SSE) and over graphql-ws. It once waited for the payment's next change: the public-view mapping was an
// async generator, whose return() is queued behind the `await` it is suspended in, so every frontend
// that subscribed and left kept a bus subscriber (and its intent feed) until the payment next moved.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { busStats } from '../../src/realtime/eventBus';
import { createAccount, type TestAccount } from '../support/accounts';
import { createPayment, referenceBody } from '../support/payments';
import { sharedGateway, type TestServer } from '../support/server';
import { waitFor } from '../support/wait';
import { mintToken } from './support';

const UPDATES = 'subscription($id: ID!) { paymentIntentUpdated(id: $id) { snapshot paymentIntent { id status } } }';

let server: TestServer;
let acct: TestAccount;
let paymentId: string;
beforeAll(async () => {
  server = await sharedGateway();
  acct = await createAccount(server.baseUrl);
  // A reference payment stays PENDING: after its snapshot, its feed has nothing to send.
  paymentId = (await createPayment(acct.api, referenceBody())).id;
});
afterAll(async () => server?.stop());

/** This process's bus subscribers (other files of the worker leave theirs at 0; counted relative anyway). */
const subscribers = () => busStats().subscribers;
const subscribersReach = (n: number) => waitFor(async () => subscribers(), (v) => v === n, 10_000, 20);

describe('a client token subscription left by its client', () => {
  it('over HTTP (GraphQL over SSE): its bus subscriber goes when the client aborts', async () => {
    const before = subscribers();
    const { token } = await mintToken(acct, paymentId);
    const abort = new AbortController();
    const res = await fetch(`${server.baseUrl}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: UPDATES, variables: { id: paymentId } }),
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('"snapshot":true')) text += new TextDecoder().decode((await reader.read()).value);
    expect(subscribers()).toBe(before + 1);
    abort.abort();
    await subscribersReach(before);
  });

  it('over graphql-ws: its bus subscriber goes when the client disposes', async () => {
    const before = subscribers();
    const { token } = await mintToken(acct, paymentId);
    const client = createClient({ url: `${server.baseUrl.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { clientToken: token }, retryAttempts: 0 });
    await new Promise<void>((resolve, reject) =>
      client.subscribe({ query: UPDATES, variables: { id: paymentId } }, { next: (m: any) => m.data?.paymentIntentUpdated?.snapshot && resolve(), error: reject, complete: () => undefined }),
    );
    expect(subscribers()).toBe(before + 1);
    await client.dispose();
    await subscribersReach(before);
  });
});
