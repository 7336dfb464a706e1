import type { components } from '../../../generated/openapi';
import { TimerModel } from '../../platform/timers/timerModel';
import { AccountModel } from '../accounts/accountModel';
import { CheckoutSessionModel } from '../checkout/checkoutSessionModel';
import { ClientTokenModel } from '../clientTokens/clientTokenModel';
import { EventModel } from '../events/eventModel';
import { IdempotencyModel } from '../idempotency/idempotencyModel';
import { PaymentLinkModel } from '../links/paymentLinkModel';
import { rebuildRollups } from '../overview/rollupRebuild';
import { rollupWritesSettled } from '../overview/rollupWrites';
import { flushRequestLogs } from '../logs/requestLogService';
import { RequestLogModel } from '../logs/requestLogModel';
import { PaymentModel } from '../payments/paymentModel';
import { forgetAccountAttempts } from '../webhooks/deliveryService';
import { WebhookDeliveryModel } from '../webhooks/webhookDeliveryModel';
import { PendingEventModel } from '../webhooks/pendingEventModel';
import { WebhookEndpointModel } from '../webhooks/webhookEndpointModel';
import { withAccountClockLock } from './sandboxClockService';
import type { GatewayRuntime } from '../gatewayRuntime';

/**
 * The sandbox reset (contract decisions, "Sandbox reset"): the account's test data goes, its account,
 * keys, dashboard sessions and webhook endpoints stay, its clock is back at offset 0.
 *
 * Order matters, so that nothing of the old data moves or sends a webhook afterwards:
 * 1. under the account's clock lock (an advance would fire timers of what is being deleted, and move
 *    the clock this sets back);
 * 2. the scheduled timers are cancelled first: no rail step, expiry or retry is claimed after this;
 * 3. the objects are deleted. A timer already running when this starts finds its payment gone: every
 *    handler is a conditional update of its document, which then matches nothing and emits nothing;
 * 4. in-flight work of this process is let settle (event hooks creating deliveries, attempts queued
 *    in memory are forgotten), then what it left behind is deleted in a second pass.
 * Idempotency records go too: a replayed key would otherwise answer with a payment that is gone.
 * Account-level caches need nothing: the endpoint cache holds endpoints (kept), and the GraphQL
 * loaders live for one request.
 */
/** The contract's answer (openapi.yaml SandboxReset): what was deleted, per kind. */
export type SandboxResetResource = components['schemas']['SandboxReset'];
type SandboxResetCounts = SandboxResetResource['deleted'];

/** `runtime`: the serving gateway's: its attempts of the account are forgotten, its hooks waited for. */
export async function resetSandbox(runtime: GatewayRuntime, accountId: string): Promise<SandboxResetResource> {
  return withAccountClockLock(accountId, async () => {
    await cancelScheduledTimers(accountId);
    forgetAccountAttempts(runtime.deliveries, accountId);
    const first = await deleteTestData(accountId);
    await runtime.hooks.hooksIdle(accountId);
    const second = await deleteTestData(accountId);
    // The overview's rollups counted what is gone: this process's last $incs land, then the account is
    // recomputed from what is left (nothing), which deletes its hours and keeps it marked built.
    await rollupWritesSettled();
    await rebuildRollups(accountId);
    await cancelScheduledTimers(accountId);
    await AccountModel.updateOne({ _id: accountId }, { $set: { clock_offset_ms: 0 } });
    const deleted = Object.fromEntries(Object.entries(first).map(([k, n]) => [k, n + second[k as keyof SandboxResetCounts]])) as unknown as SandboxResetCounts;
    return { object: 'sandbox_reset' as const, deleted };
  });
}

async function cancelScheduledTimers(accountId: string): Promise<void> {
  await TimerModel.updateMany({ account_id: accountId, state: 'scheduled' }, { $set: { state: 'cancelled', done_at: new Date() } });
}

async function deleteTestData(accountId: string): Promise<SandboxResetCounts> {
  const account = { account_id: accountId };
  // Refunds live inside their payment: counted before it goes.
  const [refunds] = await PaymentModel.aggregate<{ n: number }>([
    { $match: account },
    { $group: { _id: null, n: { $sum: { $size: { $ifNull: ['$refunds', []] } } } } },
  ]);
  // Deliveries by their endpoints (indexed), the account's only: endpoints are kept.
  const endpointIds = (await WebhookEndpointModel.find(account, { _id: 1 }).lean()).map((e) => e._id);
  // The log's queued entries first, so that none is written after its account's entries were deleted.
  await flushRequestLogs();
  const [payments, events, deliveries, links, sessions, logs] = await Promise.all([
    PaymentModel.deleteMany(account),
    EventModel.deleteMany(account),
    WebhookDeliveryModel.deleteMany({ endpoint_id: { $in: endpointIds }, ...account }),
    PaymentLinkModel.deleteMany(account),
    CheckoutSessionModel.deleteMany(account),
    RequestLogModel.deleteMany(account),
    ClientTokenModel.deleteMany(account),
    IdempotencyModel.deleteMany(account),
    // A pull endpoint's waiting events are data too (not counted: the answer's shape is fixed).
    PendingEventModel.deleteMany({ endpoint_id: { $in: endpointIds }, ...account }),
  ]);
  return {
    payment_intents: payments.deletedCount,
    refunds: refunds?.n ?? 0,
    events: events.deletedCount,
    webhook_deliveries: deliveries.deletedCount,
    payment_links: links.deletedCount,
    checkout_sessions: sessions.deletedCount,
    logs: logs.deletedCount,
  };
}
