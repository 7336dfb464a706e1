import { beforeEach, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../support/accounts';
import { gqlData } from '../graphql/support';
import { useGatewayAndReceiver } from './support/gateway';
import { createEndpoint, deliveries } from './support/webhooks';
import { ping } from './support/chaos';

const gw = useGatewayAndReceiver();
let account: TestAccount;
beforeEach(async () => {
  account = await createAccount(gw.server.baseUrl);
});

async function pullEndpoint(): Promise<any> {
  const res = await account.api.post('/webhook_endpoints', { mode: 'pull', name: 'No inbound HTTP' });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

const pending = async (endpointId: string, limit?: number) => {
  const res = await account.api.get(`/webhook_endpoints/${endpointId}/pending${limit ? `?limit=${limit}` : ''}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
};

describe('pull endpoints', () => {
  it('are created without a url; push endpoints say mode push; a url with pull, or neither, is refused', async () => {
    const pull = await pullEndpoint();
    expect(pull).toMatchObject({ object: 'webhook_endpoint', url: null, mode: 'pull', events: ['*'], chaos: null });
    expect(pull.secret).toMatch(/^whsec_/);
    const push = await createEndpoint(account.api, `${gw.receiver.url}/push`);
    expect(push.mode).toBe('push');
    for (const body of [{}, { mode: 'pull', url: `${gw.receiver.url}/x` }, { mode: 'poll' }]) {
      const res = await account.api.post('/webhook_endpoints', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    const listed = (await account.api.get('/webhook_endpoints')).body.data;
    expect(listed.map((e: any) => e.id).sort()).toEqual([pull.id, push.id].sort());
    // The events of a push endpoint are POSTed, not pulled.
    const refused = await account.api.get(`/webhook_endpoints/${push.id}/pending`);
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('invalid_request');
    // Nothing is sent to a pull endpoint: chaos has nothing to do there.
    const chaos = await account.api.put(`/webhook_endpoints/${pull.id}/chaos`, { duplicate: 1 });
    expect(chaos.status).toBe(400);
    expect(chaos.body.error.code).toBe('invalid_request');
  });

  it('keep events waiting, oldest first, exactly as GET /events shows them, until acknowledged', async () => {
    const endpoint = await pullEndpoint();
    const sent = [await ping(account.api, endpoint.id), await ping(account.api, endpoint.id), await ping(account.api, endpoint.id)];
    let all: any;
    for (let i = 0; i < 100; i++) {
      all = await pending(endpoint.id);
      if (all.data.length === 3) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(all.data.map((e: any) => e.id)).toEqual(sent);
    expect(all.has_more).toBe(false);
    const listed = (await account.api.get('/events?limit=10')).body.data;
    expect(all.data[0]).toEqual(listed.find((e: any) => e.id === sent[0]));

    const page = await pending(endpoint.id, 2);
    expect(page).toMatchObject({ object: 'list', has_more: true });
    expect(page.data.map((e: any) => e.id)).toEqual(sent.slice(0, 2));
    expect((await account.api.get(`/webhook_endpoints/${endpoint.id}/pending?limit=101`)).status).toBe(400);
    // Nothing was POSTed anywhere: a pull endpoint has no deliveries.
    expect(await deliveries(account.api, endpoint.id)).toEqual([]);

    const ack = await account.api.post(`/webhook_endpoints/${endpoint.id}/pending/ack`, { ids: [sent[0]] });
    expect(ack.status, ack.text).toBe(200);
    expect(ack.body).toEqual({ object: 'acknowledgement', acknowledged: 1 });
    expect((await pending(endpoint.id)).data.map((e: any) => e.id)).toEqual(sent.slice(1));

    for (const body of [{ ids: [] }, { ids: ['pay_000000000000000000000000'] }, { ids: Array.from({ length: 101 }, () => sent[0]) }, {}]) {
      const res = await account.api.post(`/webhook_endpoints/${endpoint.id}/pending/ack`, body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    // Another account cannot read or acknowledge them.
    const other = await createAccount(gw.server.baseUrl);
    expect((await other.api.get(`/webhook_endpoints/${endpoint.id}/pending`)).status).toBe(404);
    expect((await other.api.post(`/webhook_endpoints/${endpoint.id}/pending/ack`, { ids: sent })).status).toBe(404);
  });

  it('count each event once when concurrent pullers acknowledge the same events', async () => {
    const endpoint = await pullEndpoint();
    const sent: string[] = [];
    for (let i = 0; i < 5; i++) sent.push(await ping(account.api, endpoint.id));
    for (let i = 0; i < 100 && (await pending(endpoint.id)).data.length < 5; i++) await new Promise((r) => setTimeout(r, 50));
    // Eight pullers acknowledge overlapping sets at once: each event is counted by exactly one of them.
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => account.api.post(`/webhook_endpoints/${endpoint.id}/pending/ack`, { ids: i % 2 ? sent : [...sent].reverse().slice(0, 3) })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(answers.reduce((n, a) => n + a.body.acknowledged, 0)).toBe(5);
    expect((await pending(endpoint.id)).data).toEqual([]);
    const again = await account.api.post(`/webhook_endpoints/${endpoint.id}/pending/ack`, { ids: sent });
    expect(again.body.acknowledged).toBe(0);
  });

  it('work over GraphQL with the same operations', async () => {
    const created = await gqlData(gw.server.baseUrl, account.sk, `mutation { createWebhookEndpoint(input: { mode: PULL }) { id url mode } }`);
    const id = created.createWebhookEndpoint.id;
    expect(created.createWebhookEndpoint).toMatchObject({ url: null, mode: 'PULL' });
    const eventId = await ping(account.api, id);
    const read = `query($id: ID!) { webhookEndpoint(id: $id) { pendingEvents(first: 5) { id } } }`;
    let events: any[] = [];
    for (let i = 0; i < 100 && events.length === 0; i++) events = (await gqlData(gw.server.baseUrl, account.sk, read, { id })).webhookEndpoint.pendingEvents;
    expect(events.map((e) => e.id)).toEqual([eventId]);
    const ack = await gqlData(gw.server.baseUrl, account.sk, `mutation($id: ID!, $ids: [ID!]!) { acknowledgeWebhookEvents(endpointId: $id, ids: $ids) { acknowledged } }`, { id, ids: [eventId] });
    expect(ack.acknowledgeWebhookEvents.acknowledged).toBe(1);
  });
});
