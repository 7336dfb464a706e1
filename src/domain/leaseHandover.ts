import { logger } from '../logger';
import { EventModel } from './events/eventModel';
import type { GatewayRuntime } from './gatewayRuntime';
import { applyDeliveryTransition } from './webhooks/deliveryTransition';

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
      // Only PENDING deliveries whose lease this gateway holds, but for those chaos holds: a hold is part
      // of the first attempt (the trigger's guard, deliveryStates.ts).
      applyDeliveryTransition(
        'lease_hand_back',
        { where: { lease_until: { $gt: now }, lease_owner: runtime.deliveries.leaseOwner, held: { $ne: true } }, set: { lease_until: now, lease_owner: null } },
        'many',
      ),
    ]);
    if (hooks.modifiedCount + deliveries > 0) {
      logger.info({ hookEvents: hooks.modifiedCount, deliveries }, 'leases handed back for the next process');
    }
  } catch (err) {
    // Not lost: the leases lapse by themselves, and the work is taken then.
    logger.warn({ err }, 'could not hand back leases at stop; they lapse by themselves');
  }
}
