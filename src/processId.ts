import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * This gateway process, as it signs what it writes for other processes to see: timer leases
 * (`lease_owner`, `fired_by`) and the events it stores (`origin`, which lets the event bus skip
 * its own events in the change stream). New at every start, so a restarted process is another one.
 */
export const PROCESS_ID = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
