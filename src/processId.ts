import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * This gateway process, as it signs what it writes for other processes to see: timer leases
 * (`lease_owner`, `fired_by`) and the events it stores (`origin`, which lets the event bus skip
 * its own events in the change stream). New at every start, so a restarted process is another one.
 */
export const PROCESS_ID = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

/**
 * Who holds a lease, stored beside it (`hooks_lease_owner` of an event, `lease_owner` of a webhook
 * delivery): one gateway's hooks or delivery engine, so that a gateway stopping hands back its own leases
 * and not those of another gateway in the same process (src/domain/leaseHandover.ts).
 */
export function newLeaseOwner(): string {
  return `${PROCESS_ID}/${randomUUID().slice(0, 8)}`;
}
