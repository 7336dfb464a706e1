import { beforeEach, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../support/accounts';
import { useGatewayAndReceiver } from './support/gateway';
import { advance, createEndpoint, deliveries, waitFor } from './support/webhooks';
import { ping } from './support/chaos';

// A cooldown of 1 s between recoveries of an endpoint (60 s by default: recoverCooldown.test.ts), so that one test can recover twice.
const gw = useGatewayAndReceiver({ WEBHOOK_RECOVER_COOLDOWN_SECONDS: '1' }, { jobs: true });
let account: TestAccount;
let failing = true;
beforeEach(async () => {
  account = await createAccount(gw.server.baseUrl);
  failing = true;
  gw.receiver.reply = () => ({ status: failing ? 500 : 200 });
});

const stateOf = async (endpointId: string, eventId: string) => (await deliveries(account.api, endpointId)).find((d) => d.event_id === eventId)?.state;
const sandboxNow = async () => (await account.api.get('/sandbox/clock')).body.now as string;

describe('POST /webhook_endpoints/{id}/recover', () => {
  it('sends again the RETRYING and DEAD_LETTER deliveries created since the time given, and only those', async () => {
    const { api } = account;
    const endpoint = await createEndpoint(api, `${gw.receiver.url}/recover`);
    const old = await ping(api, endpoint.id);
    await waitFor(() => stateOf(endpoint.id, old), (s) => s === 'RETRYING');
    // Every scheduled retry fails: the older delivery ends DEAD_LETTER.
    for (const seconds of [15, 70, 310]) await advance(api, seconds);
    await waitFor(() => stateOf(endpoint.id, old), (s) => s === 'DEAD_LETTER');

    const since = await sandboxNow();
    const dead = old;
    const retrying = await ping(api, endpoint.id);
    await waitFor(() => stateOf(endpoint.id, retrying), (s) => s === 'RETRYING');

    failing = false;
    const res = await api.post(`/webhook_endpoints/${endpoint.id}/recover`, { since });
    expect(res.status, res.text).toBe(202);
    expect(res.body).toEqual({ object: 'recovery', deliveries: 1 });
    // At once again: refused while the first runs or cools down, with the time to wait.
    const again = await api.post(`/webhook_endpoints/${endpoint.id}/recover`, { since });
    expect(again.status, again.text).toBe(409);
    expect(again.headers.get('retry-after')).toBe('1');
    await waitFor(() => stateOf(endpoint.id, retrying), (s) => s === 'DELIVERED');
    expect(await stateOf(endpoint.id, dead)).toBe('DEAD_LETTER');

    // Since before both, once the cooldown is over: the dead-lettered one now; the delivered one is not sent again.
    const all = await waitFor(
      () => api.post(`/webhook_endpoints/${endpoint.id}/recover`, { since: '2000-01-01T00:00:00.000Z' }),
      (r) => r.status !== 409,
    );
    expect(all.status, all.text).toBe(202);
    expect(all.body.deliveries).toBe(1);
    await waitFor(() => stateOf(endpoint.id, dead), (s) => s === 'DELIVERED');
    const received = gw.receiver.received.filter((r) => r.path === '/recover' && r.headers['service-event-id'] === retrying);
    expect(received.length).toBe(2);
  });

  it('refuses a since that is not a date-time, and another account’s endpoint', async () => {
    const endpoint = await createEndpoint(account.api, `${gw.receiver.url}/recover-invalid`);
    for (const body of [{}, { since: 'yesterday' }, { since: 1700000000 }]) {
      const res = await account.api.post(`/webhook_endpoints/${endpoint.id}/recover`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    const other = await createAccount(gw.server.baseUrl);
    expect((await other.api.post(`/webhook_endpoints/${endpoint.id}/recover`, { since: '2000-01-01T00:00:00Z' })).status).toBe(404);
  });
});
