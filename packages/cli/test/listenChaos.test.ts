import { verifyWebhookSignature } from '@pgw/client';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../../test/support/accounts';
import { parseChaos, chaosChoices, type ListenChaos } from '../src/listen/chaos';
import { chaosDeliver } from '../src/listen/chaosForward';
import type { GatewayEvent } from '../src/eventSocket';
import { usePgwGateway } from './support/gateway';
import { runPgw, startReceiver, type ReceivedDelivery } from './support/pgw';

const gw = usePgwGateway();
let receiver: Awaited<ReturnType<typeof startReceiver>>;
afterEach(() => receiver?.close());

const verifies = (d: ReceivedDelivery, secret: string) => {
  try {
    verifyWebhookSignature(d.body, String(d.headers['service-signature']), secret);
    return true;
  } catch {
    return false;
  }
};

describe('--chaos settings', () => {
  it('parses probabilities, a delay range and a seed, and refuses what it does not know', () => {
    expect(parseChaos('duplicate=0.2,reorder=0.1,bad_signature=0.1,delay_ms=5-50,seed=42')).toEqual({
      duplicate: 0.2,
      reorder: 0.1,
      bad_signature: 0.1,
      stale_timestamp: 0,
      delay: { min: 5, max: 50 },
      seed: 42,
    });
    expect(parseChaos(undefined)).toBeUndefined();
    expect(parseChaos('duplicate=1', () => 9)?.seed).toBe(9);
    for (const bad of ['duplicate=2', 'reorder=x', 'sometimes=0.5', 'delay_ms=50-5', 'delay_ms=0-60001', 'seed=1.5', 'duplicate']) {
      expect(() => parseChaos(bad), bad).toThrow(/--chaos/);
    }
  });

  it('makes the same choices for the same seed and event', () => {
    const c = parseChaos('duplicate=0.5,reorder=0.5,bad_signature=0.5,stale_timestamp=0.5,seed=3')!;
    const ids = Array.from({ length: 30 }, (_, i) => `evt_${String(i).padStart(24, '0')}`);
    expect(ids.map((id) => chaosChoices(c, id))).toEqual(ids.map((id) => chaosChoices(c, id)));
    expect(ids.map((id) => chaosChoices({ ...c, seed: 4 }, id))).not.toEqual(ids.map((id) => chaosChoices(c, id)));
  });

  it('forwards a reordered event after the next one', async () => {
    receiver = await startReceiver();
    const chaos: ListenChaos = parseChaos('reorder=0.5,seed=8')!;
    const ids = Array.from({ length: 50 }, (_, i) => `evt_${String(i).padStart(24, '0')}`);
    const held = ids.find((id) => chaosChoices(chaos, id).reorder)!;
    const next = ids.find((id) => !chaosChoices(chaos, id).reorder)!;
    const deliver = chaosDeliver(chaos, receiver.url, 'whsec_test', () => undefined);
    const forwarded: string[] = [];
    const event = (id: string) => ({ id, object: 'event', type: 'test.ping', data: {} }) as unknown as GatewayEvent;
    const genuine = (id: string) => async () => void forwarded.push(id);
    await deliver(event(held), genuine(held));
    expect(forwarded).toEqual([]);
    await deliver(event(next), genuine(next));
    await expect.poll(() => forwarded).toEqual([next, held]);
  });
});

describe('pgw listen --chaos', () => {
  it('sends forged copies before each forwarded event and a duplicate after it, and says when the receiver took a forged one', async () => {
    const account = await createAccount(gw.baseUrl);
    const env = { ...gw.config.env, PGW_API_KEY: account.sk, PGW_BASE_URL: gw.baseUrl };
    receiver = await startReceiver();
    const p = gw.start(['listen', '--forward-to', receiver.url, '--chaos', 'duplicate=1,bad_signature=1,stale_timestamp=1,seed=5'], env);
    const secret = /whsec_[0-9a-f]+/.exec(await p.line(() => true))![0];
    const triggered = await runPgw(['trigger', 'express.succeeded', '--json'], env);
    expect(triggered.code, triggered.stderr).toBe(0);
    const intent = JSON.parse(triggered.stdout);
    const ofPayment = (r: ReceivedDelivery[]) => r.filter((d) => d.event.data.id === intent.id);
    // Per event: bad signature, stale timestamp, genuine, duplicate.
    await receiver.until((r) => ofPayment(r).length >= 8);
    const created = ofPayment(receiver.received).filter((d) => d.event.type === 'payment.created');
    expect(created.map((d) => verifies(d, secret))).toEqual([false, false, true, true]);
    expect(new Set(created.map((d) => d.headers['service-event-id'])).size).toBe(1);
    const t = (d: ReceivedDelivery) => Number(/t=(\d+)/.exec(String(d.headers['service-signature']))![1]);
    expect(t(created[2]!) - t(created[1]!)).toBeGreaterThanOrEqual(3_600 - 5);
    // The receiver took every forged copy (it answers 200 to all): the listener says so.
    await expect.poll(() => p.stderr()).toMatch(/accepted a forged copy \(bad_signature\)/);
    expect(p.stdout()).toMatch(/\(chaos: stale_timestamp\)/);
    expect(await p.signal('SIGINT')).toBe(0);
  });
});
