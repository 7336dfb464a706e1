import { constructEvent } from '@pgw/client';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../../../test/support/accounts';
import { usePgwGateway } from './support/gateway';
import { runPgw, startReceiver, type PgwProcess, type ReceivedDelivery } from './support/pgw';

const gw = usePgwGateway();
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let env: NodeJS.ProcessEnv;

afterEach(() => receiver?.close());

async function setUp(): Promise<TestAccount> {
  const account = await createAccount(gw.baseUrl);
  env = { ...gw.config.env, PGW_API_KEY: account.sk, PGW_BASE_URL: gw.baseUrl };
  receiver = await startReceiver();
  return account;
}

/** Starts `listen` and returns it with the secret of its first line. */
async function listen(extra: string[] = []): Promise<{ p: PgwProcess; secret: string }> {
  const p = gw.start(['listen', '--forward-to', receiver.url, ...extra], env);
  const first = await p.line(() => true);
  const secret = /whsec_[0-9a-f]+/.exec(first)?.[0];
  expect(secret, `first line: ${first}`).toBeDefined();
  return { p, secret: secret! };
}

async function trigger(scenario: string): Promise<{ id: string; status: string }> {
  const res = await runPgw(['trigger', scenario, '--json'], env);
  expect(res.code, res.stderr).toBe(0);
  return JSON.parse(res.stdout);
}

const ofPayment = (id: string) => (r: ReceivedDelivery[]) => r.filter((d) => d.event.data.id === id).map((d) => d.event.type);
const ids = (r: ReceivedDelivery[]) => r.map((d) => d.event.id);

describe('pgw listen --forward-to', () => {
  it('forwards payment.created and payment.succeeded of a triggered payment, signed with the printed secret', async () => {
    await setUp();
    const { p, secret } = await listen();
    const intent = await trigger('express.succeeded');
    await receiver.until((r) => ofPayment(intent.id)(r).includes('payment.succeeded'));

    expect(ofPayment(intent.id)(receiver.received)).toEqual(['payment.created', 'payment.succeeded']);
    for (const d of receiver.received) {
      // Verified as a receiver verifies real deliveries: raw body, Service-Signature, the secret.
      const event = constructEvent(d.body, d.headers['service-signature'] as string, secret);
      expect(d.headers['service-event-id']).toBe(event.id);
      expect(d.headers['content-type']).toBe('application/json');
      expect(() => constructEvent(d.body, d.headers['service-signature'] as string, 'whsec_other')).toThrow();
    }
    // The same Event as GET /events lists.
    const listed = await fetch(`${gw.baseUrl}/v1/events?limit=5`, { headers: { authorization: `Bearer ${env.PGW_API_KEY}` } }).then((r) => r.json());
    const created = listed.data.find((e: { id: string }) => e.id === receiver.received[0]!.event.id);
    expect(JSON.parse(receiver.received[0]!.body)).toEqual(created);

    // One line per delivery with its status.
    await p.line((l) => l.includes(receiver.received[1]!.event.id));
    expect(p.stdout()).toMatch(new RegExp(`payment\\.created +${receiver.received[0]!.event.id}  200  \\d+ ms`));
    // Ctrl-C stops it with exit 0.
    expect(await p.signal('SIGINT')).toBe(0);
  });

  it('keeps its secret across restarts, and --events filters', async () => {
    await setUp();
    const first = await listen(['--events', 'payment.succeeded']);
    expect(await first.p.signal('SIGINT')).toBe(0);
    const second = await listen(['--events', 'payment.succeeded']);
    expect(second.secret).toBe(first.secret);
    const intent = await trigger('express.succeeded');
    await receiver.until((r) => r.length >= 1);
    expect(ofPayment(intent.id)(receiver.received)).toEqual(['payment.succeeded']);
  });

  it('killed (SIGKILL) and restarted, it forwards what happened meanwhile once, and nothing twice', async () => {
    await setUp();
    const first = await listen();
    const before = await trigger('express.succeeded');
    await receiver.until((r) => ofPayment(before.id)(r).includes('payment.succeeded'));
    // Its line is printed once the event is recorded on disk: killed before that, it would be sent
    // again after the restart (at-least-once, as real deliveries).
    await first.p.line((l) => l.includes(receiver.received[1]!.event.id));
    await first.p.signal('SIGKILL');

    // Events made while nothing listens.
    const whileDown = await trigger('express.rejected');
    const refund = await trigger('refund.full');
    expect(receiver.received.length).toBe(2);

    const second = await listen();
    expect(second.secret).toBe(first.secret);
    await receiver.until((r) => r.some((d) => d.event.type === 'refund.succeeded'));
    expect(ofPayment(whileDown.id)(receiver.received)).toEqual(['payment.created', 'payment.failed']);
    expect(ofPayment(refund.id)(receiver.received)).toEqual(['payment.created', 'payment.succeeded']);
    // And live again after the catch-up.
    const after = await trigger('express.succeeded');
    await receiver.until((r) => ofPayment(after.id)(r).includes('payment.succeeded'));

    const all = ids(receiver.received);
    expect(new Set(all).size).toBe(all.length);
    // Exactly the account's events, each once, in the order they were made.
    const listed = await fetch(`${gw.baseUrl}/v1/events?limit=100`, { headers: { authorization: `Bearer ${env.PGW_API_KEY}` } }).then((r) => r.json());
    expect(all).toEqual(listed.data.map((e: { id: string }) => e.id).reverse());
    for (const d of receiver.received) constructEvent(d.body, d.headers['service-signature'] as string, second.secret);
  }, 120_000); // several spawned CLIs on a loaded 2-core machine: a bound on a hang, not a timing check
});
