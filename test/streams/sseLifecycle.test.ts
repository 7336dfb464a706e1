import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { busStats } from '../../src/realtime/eventBus';
import { createAccount } from '../support/accounts';
import { sharedGateway, type TestServer } from '../support/server';
import { createPayment, referenceBody, waitFor } from '../webhooks/support/webhooks';
import { openSse } from './support/sseClient';

/** In-process: what an SSE connection holds is released when the client goes away. */
let server: TestServer;
beforeAll(async () => {
  server = await sharedGateway();
});
afterAll(async () => server?.stop());

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  await waitFor(async () => cond(), Boolean, ms, 20);
}

describe('SSE connection lifecycle', () => {
  it('releases the bus subscription and the connection when the client disconnects', async () => {
    const { api, sk } = await createAccount(server.baseUrl);
    const before = busStats().subscribers;
    const streams = [];
    for (let i = 0; i < 5; i++) {
      const pi = await createPayment(api, referenceBody(10_000 + i));
      const s = await openSse(`${server.baseUrl}/v1/payment_intents/${pi.id}/events`, { authorization: `Bearer ${sk}` });
      await s.waitFor((m) => m.length === 1);
      streams.push(s);
    }
    expect(busStats().subscribers).toBe(before + 5);
    expect(server.gateway.realtime.sse.count()).toBeGreaterThanOrEqual(5);
    for (const s of streams) s.close();
    await until(() => busStats().subscribers === before);
    expect(server.gateway.realtime.sse.count()).toBe(0);
  });

  it('ignores a Last-Event-ID that is not one of the payment\'s events', async () => {
    const { api, sk } = await createAccount(server.baseUrl);
    const pi = await createPayment(api, referenceBody());
    const s = await openSse(`${server.baseUrl}/v1/payment_intents/${pi.id}/events`, {
      authorization: `Bearer ${sk}`,
      'last-event-id': 'evt_000000000000000000000000',
    });
    await s.waitFor((m) => m.length === 1);
    // A replay would come before live events: the next change arriving right after the snapshot says
    // nothing was replayed for the unknown id.
    await api.post(`/payment_intents/${pi.id}/cancel`);
    await s.waitFor((m) => m.length >= 2);
    expect(s.messages.map((m) => m.event)).toEqual(['snapshot', 'payment.cancelled']);
    s.close();
  });

  it('a restricted key without payment_intents:read gets 403', async () => {
    const { api } = await createAccount(server.baseUrl);
    const pi = await createPayment(api, referenceBody());
    const key = await api.post('/api_keys', { name: 'links only', permissions: ['payment_links:read'] });
    expect(key.status, key.text).toBe(201);
    const s = await openSse(`${server.baseUrl}/v1/payment_intents/${pi.id}/events`, { authorization: `Bearer ${key.body.secret}` });
    expect(s.status).toBe(403);
  });
});
