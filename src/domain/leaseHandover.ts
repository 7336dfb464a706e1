import { logger } from '../logger';
import { EventModel } from './events/eventModel';
import type { GatewayRuntime } from './gatewayRuntime';
import { WebhookDeliveryModel } from './webhooks/webhookDeliveryModel';

/**
 * The last step of a graceful stop before the database closes (docs/operations.md, "Stopping"): the
 * leases this gateway still holds are handed back, so that the next process (or another instance) takes
 * that work at its next sweep, within a second, rather than when the lease lapses (30 s for an event's
 * hooks, 15 s for a delivery's first attempt). Called once the work they cover has drained: the hooks
 * queued here have run and the attempts in flight were recorded; what remains leased is work this gateway
 * will not do any more (a first attempt queued behind others, or one a stop cut short).
 *
 * One `updateMany` per collection, conditional on the owner stamped with each lease (this gateway's, see
 * newLeaseOwner) and on the lease still running: a lease another process has taken since carries its own
 * owner and is left alone. Standard operators only, so it holds on a real MongoDB. Each filter names the
 * field of a partial index (`stored_at` of events whose hooks are not done, `lease_until` of PENDING
 * deliveries), so neither scans the whole collection. Timers need none: a stop waits for every timer
 * this gateway runs, and each ends by clearing its lease (done, or rescheduled).
 */
export async function handBackLeases(runtime: GatewayRuntime): Promise<void> {
  const now = Date.now();
  try {
    const [hooks, deliveries] = await Promise.all([
      EventModel.updateMany(
        { hooks_done: false, stored_at: { $gte: 0 }, hooks_lease_owner: runtime.hooks.leaseOwner, hooks_lease_until: { $gt: now } },
        { $set: { hooks_lease_until: 0, hooks_lease_owner: null } },
      ),
      // Released as a spill does (lease_until now): the sweeper takes them back oldest release first.
      WebhookDeliveryModel.updateMany(deliveriesLeasedBy(runtime.deliveries.leaseOwner, now), { $set: { lease_until: now, lease_owner: null } }),
    ]);
    if (hooks.modifiedCount + deliveries.modifiedCount > 0) {
      logger.info({ hookEvents: hooks.modifiedCount, deliveries: deliveries.modifiedCount }, 'leases handed back for the next process');
    }
  } catch (err) {
    // Not lost: the leases lapse by themselves, and the work is taken then.
    logger.warn({ err }, 'could not hand back leases at stop; they lapse by themselves');
  }
}

/** PENDING deliveries whose lease `owner` holds, but for those chaos holds: a hold is part of the first attempt. */
function deliveriesLeasedBy(owner: string, now: number): Record<string, unknown> {
  return { state: 'PENDING', lease_until: { $gt: now }, lease_owner: owner, held: { $ne: true } };
}
