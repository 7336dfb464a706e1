/**
 * How long an operation may wait for the database before it fails (and its request answers 503
 * service_unavailable, src/db/unavailable.ts): the driver's server selection and mongoose's buffering
 * while disconnected both default to 10 s or more, and a client must hear within 5 s that the service
 * is unavailable (contract decisions, "When the database or the disk fails").
 */
export const DATABASE_WAIT_MS = 3_000;

/**
 * Everything the gateway writes is acknowledged by a majority (a write the primary alone has can vanish in a
 * failover), with a `wtimeout` so that a set that lost its majority answers 503 within DATABASE_WAIT_MS
 * instead of holding the request. Set on the client and on the raw commands of src/db/batching.ts, which the
 * client's default does not reach. More: docs/decisions/notes/storage.md, "The write concern".
 */
export const WRITE_CONCERN = { w: 'majority', wtimeout: DATABASE_WAIT_MS } as const;


/** The client options every connection of the gateway uses (the HTTP thread's and the background thread's). */
export const CLIENT_OPTIONS = {
  serverSelectionTimeoutMS: DATABASE_WAIT_MS,
  autoIndex: false,
  autoCreate: false,
  bufferTimeoutMS: DATABASE_WAIT_MS,
  writeConcern: WRITE_CONCERN,
  // No `monitorCommands`: the driver's command events decode every reply. Commands are timed by
  // commandTiming.ts; the query-shape recorder turns the events on for itself (connection.ts), and a
  // MONGODB_URI with monitorCommands=true still can (bench/profile/dbCommands.ts).
} as const;

/**
 * For writes whose loss in a crash or a failover is harmless and whose durability a later durable write
 * implies (the journal, like the oplog, is one ordered log): a request count, a counter reservation, a
 * timer's claim or done mark, an outbox's clearing, a hooks-done mark, and the few more that
 * test/system/writeConcern.test.ts lists (APPLIED). Acknowledged once the primary has applied the write,
 * as MongoDB answers `w: 1`, so the caller does not wait for a journal commit; the embedded engine
 * answers the same way (packages/embedded-mongo, writeAcknowledgement). What each such write may lose,
 * and why that is safe, is said where it is used.
 */
export const APPLIED_WRITE_CONCERN = { w: 1 } as const;

/** When a write is acknowledged: durable (WRITE_CONCERN, the default) or applied (APPLIED_WRITE_CONCERN). */
export type Acknowledge = 'durable' | 'applied';

export function writeConcernFor(ack: Acknowledge): typeof WRITE_CONCERN | typeof APPLIED_WRITE_CONCERN {
  return ack === 'applied' ? APPLIED_WRITE_CONCERN : WRITE_CONCERN;
}
