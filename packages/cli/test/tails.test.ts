import { describe, expect, it } from 'vitest';
import { createAccount, idempotencyKey } from '../../../test/support/accounts';
import { usePgwGateway } from './support/gateway';
import type { PgwProcess } from './support/pgw';

const gw = usePgwGateway();

function start(args: string[], key: string): PgwProcess {
  return gw.start([...args, '--api-key', key, '--base-url', gw.baseUrl]);
}

describe('pgw events tail / logs tail', () => {
  it('events tail --json prints each new event as one JSON line, only the types asked for', async () => {
    const account = await createAccount(gw.baseUrl);
    const p = start(['events', 'tail', '--json', '--events', 'payment.created,payment.cancelled'], account.sk);
    await p.errLine((l) => l.startsWith('tailing'));
    const created = await account.api.post(
      '/payment_intents',
      { amount: 1000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000000' } },
      { idempotencyKey: idempotencyKey() },
    );
    await account.api.post(`/payment_intents/${created.body.id}/cancel`);
    await p.line((l) => l.includes('payment.cancelled'));
    const events = p.stdout().trim().split('\n').map((l) => JSON.parse(l));
    expect(events.map((e) => [e.type, e.data.id])).toEqual([
      ['payment.created', created.body.id],
      ['payment.cancelled', created.body.id],
    ]);
    expect(events[0]).toMatchObject({ object: 'event', livemode: false });
    expect(await p.signal('SIGINT')).toBe(0);
  });

  it("logs tail --json prints the key's requests as they are logged, without its own polls", async () => {
    const account = await createAccount(gw.baseUrl);
    const p = start(['logs', 'tail', '--json'], account.sk);
    await p.errLine((l) => l.startsWith('tailing'));
    const missing = await account.api.get('/payment_intents/pay_000000000000000000000000');
    expect(missing.status).toBe(404);
    const line = await p.line((l) => l.includes('/v1/payment_intents/pay_000000000000000000000000'));
    expect(JSON.parse(line)).toMatchObject({ method: 'GET', status: 404, error_code: 'resource_not_found', request_id: missing.headers.get('request-id') });
    expect(p.stdout()).not.toContain('/v1/logs');
    expect(await p.signal('SIGINT')).toBe(0);
  });
});
