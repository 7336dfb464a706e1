import { beforeEach, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../support/accounts';
import { WebhookDeliveryModel } from '../../src/domain/webhooks/webhookDeliveryModel';
import { TimerModel } from '../../src/platform/timers/timerModel';
import { HOLD_TIMER_KIND } from '../../src/domain/webhooks/chaosHold';
import { useGatewayAndReceiver } from './support/gateway';
import { advance, createEndpoint, deliveries, waitFor } from './support/webhooks';
import { ping, setChaos } from './support/chaos';

/**
 * Deliveries chaos holds (delay_ms, reorder) wait in the database with a durable timer on the account's
 * clock (src/domain/webhooks/chaosHold.ts): they go with their endpoint's deletion and with a sandbox
 * reset, and a clock advance that would release them sends nothing of theirs.
 */
const gw = useGatewayAndReceiver();
let account: TestAccount;
beforeEach(async () => {
  account = await createAccount(gw.server.baseUrl);
});

const DELAY = { delay_ms: { min: 30_000, max: 30_000 }, seed: 1 };
const atPath = (path: string) => gw.receiver.received.filter((r) => r.path === path);

/** An endpoint whose deliveries chaos holds 30 s, and `n` test pings to it, once their deliveries are stored and held. */
async function heldPings(path: string, n: number): Promise<{ endpointId: string; events: string[] }> {
  const endpoint = await createEndpoint(account.api, `${gw.receiver.url}${path}`);
  await setChaos(account.api, endpoint.id, DELAY);
  const events: string[] = [];
  for (let i = 0; i < n; i++) events.push(await ping(account.api, endpoint.id));
  const held = await waitFor(
    () => deliveries(account.api, endpoint.id),
    (list) => list.length === n,
  );
  expect(held.map((d) => [d.state, d.chaos, d.attempts])).toEqual(Array.from({ length: n }, () => ['PENDING', 'delayed', 0]));
  return { endpointId: endpoint.id, events };
}

const heldTimers = (endpointId: string) => TimerModel.countDocuments({ kind: HOLD_TIMER_KIND, ref_id: endpointId, state: 'scheduled' });

describe('deliveries held by chaos', () => {
  it('are dropped with their endpoint: a clock advance that releases the others sends none of them', async () => {
    const dropped = await heldPings('/held-deleted', 3);
    const kept = await heldPings('/held-kept', 1);
    expect(await heldTimers(dropped.endpointId)).toBe(3);

    expect((await account.api.delete(`/webhook_endpoints/${dropped.endpointId}`)).status).toBe(200);
    expect(await WebhookDeliveryModel.countDocuments({ endpoint_id: dropped.endpointId })).toBe(0);
    expect(await heldTimers(dropped.endpointId)).toBe(0);

    // The advance passes both holds and waits for the attempts it released: the kept one arrives, and by
    // then the dropped ones would have too.
    await advance(account.api, 60);
    await gw.receiver.waitFor((r) => r.path === '/held-kept', 1);
    expect(atPath('/held-kept').map((r) => r.headers['service-event-id'])).toEqual(kept.events);
    expect(atPath('/held-deleted')).toEqual([]);
  });

  it('are dropped by a sandbox reset: after it, an advance sends only what was held since', async () => {
    const before = await heldPings('/held-reset', 2);
    const reset = await account.api.post('/sandbox/reset', {});
    expect(reset.status, reset.text).toBe(200);
    expect(await WebhookDeliveryModel.countDocuments({ endpoint_id: before.endpointId })).toBe(0);
    expect(await heldTimers(before.endpointId)).toBe(0);

    const after = await ping(account.api, before.endpointId);
    await waitFor(
      () => deliveries(account.api, before.endpointId),
      (list) => list.length === 1,
    );
    await advance(account.api, 60);
    await gw.receiver.waitFor((r) => r.path === '/held-reset', 1);
    expect(atPath('/held-reset').map((r) => r.headers['service-event-id'])).toEqual([after]);
  });
});
