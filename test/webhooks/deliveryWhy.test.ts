import net from 'node:net';
import { beforeEach, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../support/accounts';
import { gqlData } from '../graphql/support';
import { useGatewayAndReceiver } from './support/gateway';
import { advance, createEndpoint, deliveries, waitFor } from './support/webhooks';

/**
 * Why a delivery failed and when it is tried again (issue 40): `last_error` in words from the attempt
 * that failed, `next_attempt_at` on the account's clock while a retry is scheduled.
 */
const gw = useGatewayAndReceiver({}, { jobs: true });
let account: TestAccount;
beforeEach(async () => {
  account = await createAccount(gw.server.baseUrl);
});

/** A loopback port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function pingDelivery(endpointId: string, until: (d: any) => boolean): Promise<any> {
  const ping = (await account.api.post(`/webhook_endpoints/${endpointId}/test`)).body;
  return waitFor(async () => (await deliveries(account.api, endpointId)).find((d) => d.event_id === ping.event_id), (d) => !!d && until(d));
}

describe('last_error and next_attempt_at', () => {
  it('an HTTP 500 says so and schedules the retry 10 s after the attempt; a later 2xx clears both', async () => {
    let status = 500;
    gw.receiver.reply = (r) => (r.path === '/hooks/why-500' ? { status } : { status: 200 });
    const endpoint = await createEndpoint(account.api, `${gw.receiver.url}/hooks/why-500`);
    const d = await pingDelivery(endpoint.id, (x) => x.attempts === 1);
    expect(d).toMatchObject({ state: 'RETRYING', last_status: 500, last_error: 'HTTP 500' });
    expect(Date.parse(d.next_attempt_at) - Date.parse(d.last_attempt_at)).toBe(10_000);

    const gql = await gqlData(
      gw.server.baseUrl,
      account.sk,
      `query($id: ID!) { webhookEndpoint(id: $id) { deliveries { id lastError nextAttemptAt } } }`,
      { id: endpoint.id },
    );
    expect(gql.webhookEndpoint.deliveries).toContainEqual({ id: d.id, lastError: 'HTTP 500', nextAttemptAt: d.next_attempt_at });

    status = 200;
    await advance(account.api, 11);
    const after = await waitFor(async () => (await deliveries(account.api, endpoint.id)).find((x) => x.id === d.id), (x) => x?.state === 'DELIVERED');
    expect(after).toMatchObject({ attempts: 2, last_status: 200, last_error: null, next_attempt_at: null });
  });

  it('a closed port is "connection refused", and the last scheduled failure leaves no next attempt', async () => {
    const endpoint = await createEndpoint(account.api, `http://127.0.0.1:${await closedPort()}/hooks`);
    const d = await pingDelivery(endpoint.id, (x) => x.attempts === 1);
    expect(d).toMatchObject({ state: 'RETRYING', last_status: 0, last_error: 'connection refused' });
    expect(d.next_attempt_at).not.toBeNull();

    // 10 s + 60 s + 5 min: the three retries, each failing the same way.
    await advance(account.api, 10 + 60 + 300 + 1);
    const dead = await waitFor(async () => (await deliveries(account.api, endpoint.id)).find((x) => x.id === d.id), (x) => x?.state === 'DEAD_LETTER');
    expect(dead).toMatchObject({ attempts: 4, last_error: 'connection refused', next_attempt_at: null });
  });

  it('a name that does not resolve is "DNS lookup failed"', async () => {
    // .invalid never resolves (RFC 6761).
    const endpoint = await createEndpoint(account.api, 'http://no-such-host.invalid/hooks');
    const d = await pingDelivery(endpoint.id, (x) => x.attempts === 1);
    expect(d).toMatchObject({ last_status: 0, last_error: 'DNS lookup failed' });
  });

  it('an https URL to a server without TLS is a TLS failure', async () => {
    const endpoint = await createEndpoint(account.api, `${gw.receiver.url.replace('http:', 'https:')}/hooks/why-tls`);
    const d = await pingDelivery(endpoint.id, (x) => x.attempts === 1);
    expect(d).toMatchObject({ last_status: 0, last_error: 'TLS handshake failed' });
  });

  it('a delivered attempt has neither', async () => {
    gw.receiver.reply = () => ({ status: 200 });
    const endpoint = await createEndpoint(account.api, `${gw.receiver.url}/hooks/why-ok`);
    const d = await pingDelivery(endpoint.id, (x) => x.state === 'DELIVERED');
    expect(d).toMatchObject({ last_error: null, next_attempt_at: null, last_status: 200 });
  });
});
