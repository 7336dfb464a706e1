import { describe, expect, it } from 'vitest';
import { createWebhookEndpoint } from '../../src/domain/webhooks/webhookEndpointService';
import { createAccount } from '../support/accounts';
import { useGatewayAndReceiver } from './support/gateway';
import { deliveries, waitFor } from './support/webhooks';

/** The default policy (WEBHOOK_ALLOW_PRIVATE_NETWORKS unset): private targets are refused. */
const gw = useGatewayAndReceiver({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' }, { jobs: true });

describe('private network policy', () => {
  it('refuses loopback, private, link-local and CGNAT targets at creation, also behind a name', async () => {
    const { api } = await createAccount(gw.server.baseUrl);
    for (const url of [
      gw.receiver.url,
      `http://localhost:${gw.receiver.port}/hook`,
      'http://[::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://0.0.0.0/hook',
      'http://10.1.2.3/hook',
      'http://172.16.0.1/hook',
      'http://192.168.1.10/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://100.64.0.1/hook',
      'http://[fd00::1]/hook',
      'http://[fe80::1]/hook',
      // IPv4-translated, local-use NAT64 and Teredo forms (issue 16).
      'http://[::ffff:0:a9fe:a9fe]/latest/meta-data',
      'http://[64:ff9b:1::a00:1]/hook',
      'http://[2001:0:a9fe:a9fe::1]/hook',
    ]) {
      const res = await api.post('/webhook_endpoints', { url });
      expect(res.status, url).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect(res.body.error.message).toMatch(/WEBHOOK_ALLOW_PRIVATE_NETWORKS/);
    }
    expect((await api.get('/webhook_endpoints')).body.data).toEqual([]);
  });

  it('accepts a public address', async () => {
    const { api } = await createAccount(gw.server.baseUrl);
    const created = await api.post('/webhook_endpoints', { url: 'https://203.0.114.7/hooks', events: ['payment.succeeded'] });
    expect(created.status, created.text).toBe(201);
  });

  it('refuses again at delivery time: no request reaches a private address', async () => {
    const { id: accountId, api } = await createAccount(gw.server.baseUrl);
    // An endpoint that was acceptable when created (by a gateway that allowed private networks: the
    // domain called here with that policy, in the test gateway's process and database), and is not for
    // this gateway's deliveries.
    const endpoint = await createWebhookEndpoint(accountId, { url: `${gw.receiver.url}/hook` }, { allowPrivateNetworks: true });
    const ping = (await api.post(`/webhook_endpoints/${endpoint.id}/test`)).body;
    const d = await waitFor(async () => (await deliveries(api, endpoint.id))[0], (x) => x?.attempts === 1);
    expect(d).toMatchObject({ event_id: ping.event_id, state: 'RETRYING', last_status: 0 });
    // The attempt is recorded only once it is over, and the receiver records a request as it arrives:
    // nothing to wait for.
    expect(gw.receiver.received).toHaveLength(0);
  });
});
