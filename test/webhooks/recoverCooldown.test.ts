import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import { ApiClient } from '../support/client';
import { startReceiver, type Receiver } from '../support/receiver';
import { twoGatewaysOnOneDatabase } from '../support/twoGateways';
import { gql } from '../graphql/support';
import { createEndpoint } from './support/webhooks';

/**
 * One recovery per endpoint at a time, and a cooldown of 60 s after it ends (contract decisions,
 * "Hostile clients at the edge"), held on the endpoint's document: so also across two gateway processes
 * on one database, and over GraphQL, which runs the same operation.
 */
const gws = twoGatewaysOnOneDatabase({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver?.close());

const SINCE = { since: '2000-01-01T00:00:00.000Z' };

describe('POST /webhook_endpoints/{id}/recover twice', () => {
  it('answers 409 with Retry-After the second time, in the other process and over GraphQL too; another endpoint is free', async () => {
    const account = await createAccount(gws.a.baseUrl);
    const viaB = new ApiClient(gws.b.url, account.sk);
    const endpoint = await createEndpoint(account.api, `${receiver.url}/cooldown`);
    const other = await createEndpoint(account.api, `${receiver.url}/cooldown-other`);

    const first = await account.api.post(`/webhook_endpoints/${endpoint.id}/recover`, SINCE);
    expect(first.status, first.text).toBe(202);

    for (const api of [account.api, viaB]) {
      const again = await api.post(`/webhook_endpoints/${endpoint.id}/recover`, SINCE);
      expect(again.status, again.text).toBe(409);
      expect(again.body.error.code).toBe('payment_already_processed');
      // Nothing was queued, so the first has ended: the message says when the next may start.
      expect(again.body.error.message).toMatch(/may be recovered again at \d{4}-\d\d-\d\dT/);
      const retryAfter = Number(again.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
    }

    const viaGraphQL = await gql(gws.a.baseUrl, account.sk, 'mutation($id: ID!, $since: DateTime!) { recoverWebhookDeliveries(endpointId: $id, since: $since) { deliveries } }', {
      id: endpoint.id,
      since: SINCE.since,
    });
    expect(viaGraphQL.body.errors?.[0]?.extensions?.code, JSON.stringify(viaGraphQL)).toBe('payment_already_processed');
    expect(viaGraphQL.body.errors?.[0]?.message).toMatch(/may be recovered again at/);

    const free = await viaB.post(`/webhook_endpoints/${other.id}/recover`, SINCE);
    expect(free.status, free.text).toBe(202);
  });

  it('lets one of two concurrent recoveries through, whichever process takes them', async () => {
    const account = await createAccount(gws.a.baseUrl);
    const viaB = new ApiClient(gws.b.url, account.sk);
    const endpoint = await createEndpoint(account.api, `${receiver.url}/cooldown-race`);
    const answers = await Promise.all([account.api, viaB, account.api, viaB].map((api) => api.post(`/webhook_endpoints/${endpoint.id}/recover`, SINCE)));
    expect(answers.map((r) => r.status).sort()).toEqual([202, 409, 409, 409]);
  });
});
