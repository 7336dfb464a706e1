import { logger } from '../logger';
import { EventModel } from './events/eventModel';
import type { GatewayRuntime } from './gatewayRuntime';
import { WebhookDeliveryModel } from './webhooks/webhookDeliveryModel';

/**
 * The last step of a graceful stop before the database closes (docs/operations.md, "Stopping"): the leases
 * this gateway still holds are handed back, so the next process takes that work within a second rather than
 * when the lease lapses. Conditional on this gateway's owner stamp, so a lease another process took since is
 * left alone. More: docs/decisions/notes/events-and-payments.md, "Handing leases back at a stop".
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
