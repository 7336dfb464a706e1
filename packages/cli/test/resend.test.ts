import { constructEvent } from '@pgw/client';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../../../test/support/accounts';
import { usePgwGateway } from './support/gateway';
import { runPgw, startReceiver, type PgwProcess, type ReceivedDelivery } from './support/pgw';

const gw = usePgwGateway();
const receivers: Awaited<ReturnType<typeof startReceiver>>[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});

async function receiver(status?: Parameters<typeof startReceiver>[0]) {
  const r = await startReceiver(status);
  receivers.push(r);
  return r;
}

const flags = (account: TestAccount) => ['--api-key', account.sk, '--base-url', gw.baseUrl];

async function listen(account: TestAccount, url: string, extra: string[] = []): Promise<{ p: PgwProcess; secret: string }> {
  const p = gw.start(['listen', '--forward-to', url, ...extra, ...flags(account)]);
  const first = await p.line(() => true);
  return { p, secret: /whsec_[0-9a-f]+/.exec(first)![0] };
}

async function trigger(account: TestAccount, scenario: string): Promise<{ id: string }> {
  const res = await runPgw(['trigger', scenario, '--json', ...flags(account)], gw.config.env);
  expect(res.code, res.stderr).toBe(0);
  return JSON.parse(res.stdout);
}

const ofEvent = (id: string) => (r: ReceivedDelivery[]) => r.filter((d) => d.event.id === id);

describe('pgw listen: a forward without a 2xx', () => {
  it('is retried with backoff until the receiver takes it (at least once, the next event waits)', async () => {
    // Every event's first two attempts get a 500, the third a 200.
    const r = await receiver((d, all) => (ofEvent(d.event.id)(all).length <= 2 ? 500 : 200));
    const account = await createAccount(gw.baseUrl);
    const { p } = await listen(account, r.url);
    const intent = await trigger(account, 'express.rejected');
    await r.until((all) => all.some((d) => d.event.type === 'payment.failed' && d.event.data.id === intent.id) && ofEvent(all.at(-1)!.event.id)(all).length === 3);

    const created = r.received[0]!.event.id;
    // In order: the three attempts of payment.created, then those of payment.failed.
    expect(r.received.map((d) => d.event.type)).toEqual(['payment.created', 'payment.created', 'payment.created', 'payment.failed', 'payment.failed', 'payment.failed']);
    const lines = p.stdout().split('\n').filter((l) => l.includes(created));
    expect(lines).toEqual([
      expect.stringMatching(/ 500 .*\(attempt 1 of 4, retrying in 1\.0 s\)$/),
      expect.stringMatching(/ 500 .*\(attempt 2 of 4, retrying in 2\.0 s\)$/),
      expect.stringMatching(/ 200 .*\(attempt 3\)$/),
    ]);
    expect(await p.signal('SIGINT')).toBe(0);
  }, 90_000);

  it('is given up after --retries more attempts, said on stderr, and the next event still goes', async () => {
    const r = await receiver((d) => (d.event.type === 'payment.created' ? 503 : 200));
    const account = await createAccount(gw.baseUrl);
    const { p } = await listen(account, r.url, ['--retries', '1', '--json']);
    const intent = await trigger(account, 'express.rejected');
    await r.until((all) => all.some((d) => d.event.type === 'payment.failed' && d.event.data.id === intent.id));
    expect(r.received.map((d) => d.event.type)).toEqual(['payment.created', 'payment.created', 'payment.failed']);
    const given = await p.errLine((l) => l.startsWith('gave up'));
    expect(given).toBe(`gave up forwarding ${r.received[0]!.event.id} after 2 attempts: HTTP 503`);
    // The line is printed once the forward is answered: the receiver may have it a moment before.
    await p.line((l) => l.includes('"payment.failed"'));
    const objects = p.stdout().trim().split('\n').map((l) => JSON.parse(l)).filter((o) => o.object === 'pgw.delivery');
    expect(objects.map((o) => [o.type, o.status, o.attempt, o.gave_up ?? false])).toEqual([
      ['payment.created', 503, 1, false],
      ['payment.created', 503, 2, true],
      ['payment.failed', 200, 1, false],
    ]);
  }, 90_000);

  it('--retries must be 0 to 10', async () => {
    const account = await createAccount(gw.baseUrl);
    const res = await runPgw(['listen', '--forward-to', 'http://127.0.0.1:9/', '--retries', '11', ...flags(account)], gw.config.env);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--retries must be a whole number from 0 to 10');
  });
});

describe('pgw resend <event_id>', () => {
  it('reaches a running listen, which forwards the event again, signed with its secret', async () => {
    const r = await receiver();
    const account = await createAccount(gw.baseUrl);
    const { p, secret } = await listen(account, r.url);
    const intent = await trigger(account, 'express.succeeded');
    await r.until((all) => all.some((d) => d.event.type === 'payment.succeeded' && d.event.data.id === intent.id));
    const succeeded = r.received.find((d) => d.event.type === 'payment.succeeded')!.event.id;

    const res = await runPgw(['resend', succeeded, '--listeners-only', ...flags(account)], gw.config.env);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(new RegExp(`^${succeeded}  listener ${r.url}  200  \\d+ ms\\n$`));
    const copies = ofEvent(succeeded)(r.received);
    expect(copies).toHaveLength(2);
    expect(constructEvent(copies[1]!.body, copies[1]!.headers['service-signature'] as string, secret).id).toBe(succeeded);
    await p.line((l) => l.includes(succeeded) && l.includes('(resent)'));
  });

  it('reaches the endpoints that had a delivery of it (--endpoint: that one only), and both by default', async () => {
    const hook = await receiver();
    const local = await receiver();
    const account = await createAccount(gw.baseUrl);
    const endpoint = (await account.api.post('/webhook_endpoints', { url: hook.url, events: ['payment.succeeded'] })).body;
    await listen(account, local.url);
    const intent = await trigger(account, 'express.succeeded');
    await hook.until((all) => all.some((d) => d.event.data.id === intent.id));
    const succeeded = hook.received[0]!.event.id;
    await local.until((all) => ofEvent(succeeded)(all).length === 1);

    const one = await runPgw(['resend', succeeded, '--endpoint', endpoint.id, ...flags(account)], gw.config.env);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toMatch(new RegExp(`^${succeeded}  endpoint ${endpoint.id} \\(delivery whd_\\w+\\)  200  \\d+ ms  DELIVERED\\n$`));
    expect(ofEvent(succeeded)(hook.received)).toHaveLength(2);
    expect(ofEvent(succeeded)(local.received)).toHaveLength(1);

    const both = await runPgw(['resend', succeeded, '--json', ...flags(account)], gw.config.env);
    expect(both.code, both.stderr).toBe(0);
    const targets = both.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(targets.map((t) => [t.target, t.status])).toEqual([
      ['listener', 200],
      ['endpoint', 200],
    ]);
    expect(ofEvent(succeeded)(hook.received)).toHaveLength(3);
    expect(ofEvent(succeeded)(local.received)).toHaveLength(2);

    // payment.created never went to that endpoint (its filter): said, and the listener still gets it.
    const created = local.received.find((d) => d.event.type === 'payment.created')!.event.id;
    const filtered = await runPgw(['resend', created, ...flags(account)], gw.config.env);
    expect(filtered.code, filtered.stderr).toBe(0);
    expect(filtered.stderr).toContain(`endpoint ${endpoint.id}: no delivery of ${created}`);
  });

  it('an unknown event is resource_not_found, nowhere to send no_target, a malformed id a usage error, a bad key authentication_failed', async () => {
    const account = await createAccount(gw.baseUrl);
    const unknown = await runPgw(['resend', 'evt_doesnotexist000000000000', ...flags(account)], gw.config.env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^error: resource_not_found: /m);

    await trigger(account, 'express.rejected');
    const event = (await account.api.get('/events?limit=1')).body.data[0].id;
    const nowhere = await runPgw(['resend', event, ...flags(account)], gw.config.env);
    expect(nowhere.code).toBe(1);
    expect(nowhere.stderr).toMatch(/^error: no_target: /m);

    const malformed = await runPgw(['resend', 'pay_123', ...flags(account)], gw.config.env);
    expect(malformed.code).toBe(2);

    const refused = await runPgw(['resend', event, '--api-key', 'sk_test_never_made_000000000000', '--base-url', gw.baseUrl], gw.config.env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error: authentication_failed: /m);
  });
});
