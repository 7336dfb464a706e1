// HTTP subscriptions held by another gateway process than the one that revokes: a key revoked on gateway
// A ends its stream on gateway B, and so does a client token (B finds both by its periodic checks).
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createAccount, type TestAccount } from '../support/accounts';
import { createPayment, referenceBody } from '../support/payments';
import { twoGatewaysOnOneDatabase } from '../support/twoGateways';
import { mintToken } from '../clientTokens/support';
import { follow, sseClient, within } from './httpSubscriptionSupport';

vi.setConfig({ testTimeout: 120_000 });

const gateways = twoGatewaysOnOneDatabase();
let acct: TestAccount;
beforeAll(async () => {
  acct = await createAccount(gateways.a.baseUrl);
});

const PUBLIC_UPDATES = 'subscription($id: ID!) { paymentIntentUpdated(id: $id) { snapshot paymentIntent { id status } } }';

/** Subscribes on gateway B over SSE, waits for the snapshot, runs `revoke` on A, and returns how it ended. */
async function endedOnB(bearer: string, paymentId: string, revoke: () => Promise<void>) {
  const client = sseClient(gateways.b.url, bearer);
  const sub = follow((sink) => client.subscribe({ query: PUBLIC_UPDATES, variables: { id: paymentId } }, sink));
  try {
    await sub.until((m) => m.data?.paymentIntentUpdated.snapshot === true);
    await revoke();
    const how = await within('the end on the other gateway', sub.ended, 30_000);
    return { how, last: sub.results.at(-1) };
  } finally {
    client.dispose();
  }
}

describe('HTTP subscriptions across gateway processes', () => {
  it('a key revoked on one gateway ends its stream on another with authentication_failed', async () => {
    const key = await acct.api.post('/api_keys', { name: 'revoked elsewhere', permissions: ['payment_intents:read'] });
    expect(key.status, key.text).toBe(201);
    const payment = await createPayment(acct.api, referenceBody());
    const { how, last } = await endedOnB(key.body.secret, payment.id, async () => {
      expect((await acct.api.delete(`/api_keys/${key.body.id}`)).status).toBe(200);
    });
    expect(how).toEqual({ complete: true });
    expect(last?.errors?.[0]).toMatchObject({ message: 'api key revoked', extensions: { code: 'authentication_failed' } });
  });

  it("a client token revoked on one gateway ends its stream on another", async () => {
    const payment = await createPayment(acct.api, referenceBody());
    const minted = await mintToken(acct, payment.id);
    const { how, last } = await endedOnB(minted.token, payment.id, async () => {
      expect((await acct.api.delete(`/client_tokens/${minted.id}`)).status).toBe(200);
    });
    expect(how).toEqual({ complete: true });
    expect(last?.errors?.[0]?.extensions?.code).toBe('authentication_failed');
  });
});
