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
import { deleteRequestLogs } from '../logs/requestLogStore';
import { PaymentModel } from '../payments/paymentModel';
import { forgetAccountAttempts } from '../webhooks/deliveryEngine';
import { WebhookDeliveryModel } from '../webhooks/webhookDeliveryModel';
import { PendingEventModel } from '../webhooks/pendingEventModel';
import { WebhookEndpointModel } from '../webhooks/webhookEndpointModel';
import { withAccountClockLock } from './sandboxClockService';
import type { GatewayRuntime } from '../gatewayRuntime';

/**
 * The sandbox reset (contract decisions, "Sandbox reset"): test data goes; the account, keys, sessions and
 * endpoints stay; the clock is back at 0. So that nothing old moves or sends a webhook afterwards: under the
 * clock lock, timers cancelled first, then the objects, then a second pass once this process's in-flight work
 * has settled. More: docs/decisions/notes/events-and-payments.md, "The sandbox reset".
 */
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
    deleteRequestLogs(accountId),
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
    logs,
  };
}
