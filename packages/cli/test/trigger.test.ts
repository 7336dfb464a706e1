import { describe, expect, it } from 'vitest';
import { createAccount } from '../../../test/support/accounts';
import { usePgwGateway } from './support/gateway';
import { runPgw } from './support/pgw';

const gw = usePgwGateway();

// Each scenario on its own account: reference.expired moves that account's clock 72 h.
describe('pgw trigger <scenario> --json', () => {
  it.each([
    ['express.succeeded', { status: 'SUCCEEDED', customer: { mobile: '923000000' } }],
    ['express.rejected', { status: 'FAILED', failure_code: 'rejected_by_customer' }],
    ['express.unknown', { status: 'SUCCEEDED', customer: { mobile: '923000002' } }],
    ['express.insufficient_funds', { status: 'FAILED', failure_code: 'insufficient_funds' }],
    ['express.unavailable', { status: 'FAILED', failure_code: 'provider_unavailable' }],
    ['reference.paid', { status: 'SUCCEEDED', payment_method: 'multicaixa_reference' }],
    ['reference.expired', { status: 'EXPIRED', payment_method: 'multicaixa_reference' }],
    ['refund.partial', { status: 'PARTIALLY_REFUNDED', amount_refunded: 5000 }],
    ['refund.full', { status: 'REFUNDED', amount_refunded: 10000 }],
    ['checkout.completed', { status: 'SUCCEEDED', metadata: expect.objectContaining({ checkout_session: expect.stringMatching(/^cs_/) }) }],
  ])('%s', async (scenario, expected) => {
    const account = await createAccount(gw.baseUrl);
    const res = await runPgw(['trigger', scenario, '--json', '--api-key', account.sk, '--base-url', gw.baseUrl], gw.config.env);
    expect(res.code, res.stderr).toBe(0);
    const intent = JSON.parse(res.stdout);
    expect(intent).toMatchObject({ object: 'payment_intent', ...expected });
    // The printed intent is the stored one.
    const stored = await account.api.get(`/payment_intents/${intent.id}`);
    expect(stored.body.status).toBe(intent.status);
    if (scenario === 'express.unknown') {
      const events = await account.api.get('/events?limit=10');
      expect(events.body.data.map((e: { type: string }) => e.type).reverse()).toEqual(['payment.created', 'payment.unknown', 'payment.succeeded', 'payment.reconciled']);
    }
  });

  it('without --json prints one plain line (no colour when piped)', async () => {
    const account = await createAccount(gw.baseUrl);
    const res = await runPgw(['trigger', 'express.rejected', '--api-key', account.sk, '--base-url', gw.baseUrl], gw.config.env);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^express\.rejected: pay_\w+ FAILED rejected_by_customer \(10000 AOA\)\n$/);
  });

  it('a refused key is exit 1 with the API code on stderr', async () => {
    const res = await runPgw(['trigger', 'express.succeeded', '--api-key', 'sk_test_revoked_or_never_made_00', '--base-url', gw.baseUrl], gw.config.env);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: authentication_failed: .*\(request req_\w+\)$/m);
    expect(res.stdout).toBe('');
  });

  it('clock advance moves the account clock by the duration', async () => {
    const account = await createAccount(gw.baseUrl);
    const res = await runPgw(['clock', 'advance', '1h30m', '--json', '--api-key', account.sk, '--base-url', gw.baseUrl], gw.config.env);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ object: 'sandbox_clock', offset_seconds: 5400 });
    const clock = await account.api.get('/sandbox/clock');
    expect(clock.body.offset_seconds).toBe(5400);
  });
});
