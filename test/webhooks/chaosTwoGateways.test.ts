import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import { ApiClient } from '../support/client';
import { startReceiver, type Receiver } from '../support/receiver';
import { twoGatewaysOnOneDatabase } from '../support/twoGateways';
import { createEndpoint, deliveries, waitFor } from './support/webhooks';
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
    // The marker that nothing more comes is the delivery log, not a wait. A copy is written to the log
    // before it is sent (one per kind and event: a unique index, whichever process tries) and marked
    // attempted once the receiver has answered it; a genuine delivery is attempted only until it is
    // DELIVERED. Once the log shows each event's three requests answered, no process has anything left
    // to send for these events, and what the receiver got is final.
    const log = await waitFor(
      async () => (await deliveries(account.api, endpoint.id)).filter((d) => events.includes(d.event_id)),
      (ds) => ds.length >= events.length * 3 && ds.every((d) => d.attempts > 0),
    );
    for (const id of events) {
      const kinds = log.filter((d) => d.event_id === id).map((d) => `${d.chaos ?? 'genuine'} ${d.state} ${d.attempts}`);
      expect(kinds.sort(), id).toEqual(['bad_signature DELIVERED 1', 'duplicate DELIVERED 1', 'genuine DELIVERED 1']);
      expect(receiver.received.filter((r) => r.headers['service-event-id'] === id).length, id).toBe(3);
    }
    expect(await chaosReport(viaB, endpoint.id)).toEqual(await chaosReport(account.api, endpoint.id));
  });
});
