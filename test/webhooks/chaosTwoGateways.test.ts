import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import { ApiClient } from '../support/client';
import { startReceiver, type Receiver } from '../support/receiver';
import { twoGatewaysOnOneDatabase } from '../support/twoGateways';
import { createEndpoint, waitFor } from './support/webhooks';
import { chaosReport, ping, setChaos } from './support/chaos';

/**
 * Chaos across processes: two gateways on one database send the same endpoint's deliveries. Each copy is
 * sent once whichever process attempts the delivery, and the report adds up what both did ($inc).
 */
const gws = twoGatewaysOnOneDatabase({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver?.close());

describe('chaos on two gateways sharing a database', () => {
  it('sends each copy once and counts every one in one report', async () => {
    const account = await createAccount(gws.a.baseUrl);
    const viaB = new ApiClient(gws.b.url, account.sk);
    const endpoint = await createEndpoint(account.api, `${receiver.url}/two`);
    await setChaos(account.api, endpoint.id, { duplicate: 1, bad_signature: 1, seed: 21 });
    const events: string[] = [];
    for (let i = 0; i < 3; i++) {
      events.push(await ping(account.api, endpoint.id));
      events.push(await ping(viaB, endpoint.id));
    }
    // Per event: the forged copy, the genuine delivery, the duplicate; never more, whoever sent them.
    await receiver.waitFor((r) => r.path === '/two', events.length * 3);
    const report = await waitFor(() => chaosReport(account.api, endpoint.id), (r) => r.duplicates_sent === events.length && r.forged_sent === events.length);
    expect(report).toMatchObject({ forged_accepted: events.length, forged_rejected: 0 });
    // Give a second process the time it would need to send a second copy, then count again.
    await new Promise((r) => setTimeout(r, 2_500));
    for (const id of events) expect(receiver.received.filter((r) => r.headers['service-event-id'] === id).length, id).toBe(3);
    expect(await chaosReport(viaB, endpoint.id)).toEqual(await chaosReport(account.api, endpoint.id));
  });
});
