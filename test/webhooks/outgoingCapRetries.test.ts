import { describe, expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import { TimerModel } from '../../src/platform/timers/timerModel';
import { RETRY_TIMER_KIND } from '../../src/domain/webhooks/webhookEndpointService';
import { useGatewayAndReceiver } from './support/gateway';
import { advance, createEndpoint, deliveries, waitFor } from './support/webhooks';
import { ping } from './support/chaos';

/**
 * Retries a clock advance releases take from the outgoing budget (src/domain/webhooks/outgoingBudget.ts)
 * like every webhook request: over it, they are not sent and count no attempt, of the delivery or of its
 * timer; their timer fires again when the budget has room. 6 requests per minute per account here: 3
 * at once, then one every 20 s.
 */
const capped = useGatewayAndReceiver({ WEBHOOK_MAX_REQUESTS_PER_ACCOUNT_PER_MINUTE: '6' });

describe('retries released by a clock advance', () => {
  it('wait for the account’s budget: no request over it, no attempt counted, the retry timer fires again', async () => {
    const started = Date.now();
    const acct = await createAccount(capped.server.baseUrl);
    capped.receiver.reply = () => ({ status: 500 });
    const endpoint = await createEndpoint(acct.api, `${capped.receiver.url}/capped`);
    for (let i = 0; i < 3; i++) await ping(acct.api, endpoint.id);
    await waitFor(
      () => deliveries(acct.api, endpoint.id),
      (list) => list.length === 3 && list.every((d) => d.state === 'RETRYING'),
    );

    // Every retry is due now; the budget has at most what refilled since the first attempts.
    await advance(acct.api, 15);
    const sent = capped.receiver.received.filter((r) => r.path === '/capped').length;
    const refilled = Math.floor((Date.now() - started) / 20_000);
    expect(sent).toBeLessThanOrEqual(3 + refilled);
    const list = await deliveries(acct.api, endpoint.id);
    // What was not sent is still RETRYING with its one attempt: deferred, not failed.
    expect(list.reduce((n, d) => n + d.attempts, 0)).toBe(sent);
    expect(list.every((d) => d.state === 'RETRYING')).toBe(true);
    // Deferred, not failed: scheduled again with the claim's attempt given back and no error kept, so a
    // retry deferred for an hour is never marked failed (the timer service's MAX_ATTEMPTS).
    const deferred = await TimerModel.find({ kind: RETRY_TIMER_KIND, ref_id: endpoint.id, state: 'scheduled' }).lean();
    expect(deferred.length).toBe(3 - (sent - 3));
    expect(deferred.every((t) => t.attempts === 0 && !t.last_error)).toBe(true);
  });
});
