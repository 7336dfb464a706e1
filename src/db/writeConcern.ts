/**
 * The write concern of everything the gateway writes: acknowledged once a majority of the replica
 * set's data-bearing members have it, so a failover cannot roll it back. MongoDB's implicit default is
 * w: "majority" only on some topologies (a set with an arbiter gets w: 1), and an idempotency record,
 * a payment's state change or a queued event acknowledged by the primary alone could vanish with it.
 * Set on the client (covers every driver and mongoose operation; the driver leaves it off statements
 * inside a transaction and puts it on the commit) and on the raw commands src/db/batching.ts sends,
 * which the client's default does not reach.
 */
export const WRITE_CONCERN = { w: 'majority' } as const;
