import { expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import { createPayment, referenceBody } from '../support/payments';
import { waitFor } from '../support/wait';
import { errorCodes, gql, startGraphqlTestServer, wsClient } from './support';

/** Graceful shutdown: open subscriptions are ended with 1012 Service Restart (graphql-ws clients retry it) instead of holding the server until the grace ends. */
it('closes open WebSocket subscriptions with 1012 and stops', async () => {
  const server = await startGraphqlTestServer({ SHUTDOWN_GRACE_MS: '60000' });
  let closeCode = 0;
  let client: ReturnType<typeof wsClient> | undefined;
  try {
    const acct = await createAccount(server.baseUrl);
    // A subscription sent over HTTP is refused with a pointer to the WebSocket endpoint.
    const overHttp = await gql(server.baseUrl, acct.sk, 'subscription { events { id } }');
    expect(overHttp.status).toBe(400);
    expect(errorCodes(overHttp)).toEqual(['invalid_request']);

    client = wsClient(server.baseUrl, acct.sk, { onClose: (code) => (closeCode = code) });
    const received: unknown[] = [];
    const subscribed = new Promise<void>((resolve) => {
      client!.subscribe(
        { query: 'subscription { events { id } }' },
        { next: (m) => received.push(m), error: () => resolve(), complete: () => resolve() },
      );
    });
    // Wait until the server has the subscription: one of the account's events reaches it (the protocol
    // acknowledges no subscribe, and events are not replayed, so payments are made until one arrives).
    await waitFor(
      async () => {
        await createPayment(acct.api, referenceBody(1000));
        return received.length;
      },
      (n) => n > 0,
      30_000,
      100,
    );
    await acct.api.post('/payment_links', { amount: 1000 });
    await server.stop();
    await subscribed;
    expect(closeCode).toBe(1012);
  } finally {
    await client?.dispose();
  }
});
