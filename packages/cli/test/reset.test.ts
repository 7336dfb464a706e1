import { describe, expect, it } from 'vitest';
import { createAccount } from '../../../test/support/accounts';
import { createPayment, referenceBody } from '../../../test/support/payments';
import { usePgwGateway } from './support/gateway';
import { runPgw } from './support/pgw';

const gw = usePgwGateway();

/** `pgw reset`: POST /sandbox/reset after a confirmation (or --yes). */
describe('pgw reset', () => {
  const args = (sk: string, ...more: string[]) => ['reset', ...more, '--api-key', sk, '--base-url', gw.baseUrl];
  const paymentCount = async (api: Awaited<ReturnType<typeof createAccount>>['api']) => (await api.get('/payment_intents')).body.data.length;

  it('resets nothing unless confirmed: no answer or "n" exit 2, the payments are still there', async () => {
    const account = await createAccount(gw.baseUrl);
    await createPayment(account.api, referenceBody());
    const closed = await runPgw(args(account.sk), gw.config.env);
    expect(closed.code).toBe(2);
    expect(closed.stderr).toContain('[y/N]');
    expect(closed.stderr).toContain('nothing was reset');
    const no = await runPgw(args(account.sk), gw.config.env, { stdin: 'n\n' });
    expect(no.code).toBe(2);
    expect(await paymentCount(account.api)).toBe(1);
  });

  it('resets after "y", and with --yes without asking (--json prints the answer)', async () => {
    const account = await createAccount(gw.baseUrl);
    await createPayment(account.api, referenceBody());
    const yes = await runPgw(args(account.sk), gw.config.env, { stdin: 'y\n' });
    expect(yes.code, yes.stderr).toBe(0);
    expect(yes.stdout).toContain('deleted 1 payment intents');
    expect(await paymentCount(account.api)).toBe(0);

    await createPayment(account.api, referenceBody());
    const json = await runPgw(args(account.sk, '--yes', '--json'), gw.config.env);
    expect(json.code, json.stderr).toBe(0);
    expect(json.stderr).not.toContain('[y/N]');
    expect(JSON.parse(json.stdout)).toMatchObject({ object: 'sandbox_reset', deleted: { payment_intents: 1, refunds: 0 } });
  });

  it('a restricted key is refused: exit 1 with the code', async () => {
    const account = await createAccount(gw.baseUrl);
    const restricted = (await account.api.post('/api_keys', { name: 'ops', permissions: ['sandbox:write'] })).body.secret;
    const res = await runPgw(args(restricted, '--yes'), gw.config.env);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('permission_denied');
  });
});
