import { ApiError } from '../errors';

/**
 * Errors that mean "the database cannot be reached or cannot take this write right now", from the
 * driver (no server selectable, a dropped or timed-out socket, a pool cleared by a failure), from
 * mongoose (a command buffered while disconnected) and from the server (shutting down, a primary
 * stepping down, a write concern that timed out, a disk too full to journal a write). They are the client's cue to retry, not a fault of
 * the request: answered 503 `service_unavailable` with Retry-After, never 500.
 */
const UNAVAILABLE_NAMES: ReadonlySet<string> = new Set([
  'MongoServerSelectionError',
  'MongooseServerSelectionError',
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoPoolClearedError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
  'MongoServerClosedError',
  'MongoOperationTimeoutError',
  'CommandDeadlineError',
]);

/** Server error codes with the same meaning (MongoDB's error_codes.yml). */
const UNAVAILABLE_CODES: ReadonlySet<number> = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  64, // WriteConcernFailed: `wtimeout` passed before a majority had the write
  89, // NetworkTimeout
  91, // ShutdownInProgress
  189, // PrimarySteppedDown
  9001, // SocketException
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
  14031, // OutOfDiskSpace: the embedded engine could not journal the write (a full disk) and did not apply it
]);

/**
 * The embedded engine refused a write because its disk is full (OutOfDiskSpace, 14031): reads are still
 * served meanwhile, so what a read path writes on the side (a request's count) goes on without it.
 */
export function isDiskFull(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 14031;
}

/** A command the database did not answer within its deadline (src/db/batching.ts, COMMAND_DEADLINE_MS). */
export class CommandDeadlineError extends Error {
  override readonly name = 'CommandDeadlineError';
  constructor(ms: number) {
    super(`the database did not answer a command within ${ms} ms`);
  }
}

/** How long a client is told to wait: about what the driver takes to find a server that came back. */
export const UNAVAILABLE_RETRY_AFTER_S = 2;

export function isDatabaseUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { name, code, message } = err as { name?: unknown; code?: unknown; message?: unknown };
  if (typeof name === 'string' && UNAVAILABLE_NAMES.has(name)) return true;
  if (typeof code === 'number' && UNAVAILABLE_CODES.has(code)) return true;
  // mongoose's buffering timeout is a plain MongooseError told apart only by its message.
  return name === 'MongooseError' && typeof message === 'string' && message.includes('buffering timed out');
}

export function serviceUnavailable(): ApiError {
  return new ApiError('service_unavailable', 'The service is temporarily unavailable (its database cannot be reached or cannot accept writes). Retry after the Retry-After delay; a POST with the same Idempotency-Key is safe to retry.', {
    'Retry-After': String(UNAVAILABLE_RETRY_AFTER_S),
  });
}

/** `err` as the 503 it means when the database is unavailable; undefined for any other error. */
export function unavailableError(err: unknown): ApiError | undefined {
  return isDatabaseUnavailable(err) ? serviceUnavailable() : undefined;
}
