import { driverCollection } from '../../db/driverCollection';
import { isDuplicateKey } from '../../db/errors';
import { logger } from '../../logger';
import { requestLogDropped } from '../../metrics/domain';
import { countedWarning } from '../../platform/countedWarning';
import type { ApiKeyRecord } from '../accounts/apiKeyModel';
import { RefusedRequestsModel, type RefusedRequestsRecord } from './refusedRequestsModel';
import { loggedBodies } from './logBodies';
import { logFacets, type LogFilter } from './logFacets';
import { batchDocuments, RequestLogBatchModel, type RequestLogBatchRecord } from './requestLogBatchModel';
import { entryBytes, RequestLogHold, type TakenBatch } from './requestLogHold';
import type { RequestLogRecord } from './requestLogModel';
import { readRequestLogs } from './requestLogStore';

export interface LogEntryResource {
  request_id: string;
  method: string;
  path: string;
  status: number;
  error_code: string | null;
  latency_ms: number;
  created_at: string;
  source: 'api' | 'dashboard';
  request_body: string | null;
  response_body: string | null;
}

/**
 * Request log entries are written in batches, one insert per FLUSH_MS (or per BATCH_MAX entries),
 * rather than one insert per request: that took a database round trip off every authenticated request
 * (see bench/HISTORY.md). Listing flushes first, so a process always lists its own requests; those
 * of another gateway process appear within FLUSH_MS. Shutdown flushes too (requestLogService).
 * 100 ms rather than 20: one insert then carries a tenth of a second of requests (30 at 300 requests/s
 * instead of 6), and the insert is a command the main thread pays for like any other (issue 13).
 */
const FLUSH_MS = 100;
const BATCH_MAX = 500;
/**
 * Inserts under way at once, like src/db/batching.ts; while a slow database holds them, further
 * entries wait queued, where the oldest are dropped once the entries held reach their bound
 * (requestLogHold.ts). An explicit flush (listing, shutdown, reset) sends everything at once.
 */
const INSERTS_IN_FLIGHT_MAX = 2;

// A write buffer of the database's request log, like src/db/batching.ts: shared by the gateways of a
// process, flushed on a timer armed on demand; a gateway's stop flushes what is queued, others' too.
// eslint-disable-next-line no-restricted-syntax -- the database's write buffer
const hold = new RequestLogHold();
// eslint-disable-next-line no-restricted-syntax -- the database's write buffer (above)
let insertsInFlight = 0;
/** Refusals counted since the last flush: `_id` of their refused_requests document → counts. */
// eslint-disable-next-line no-restricted-syntax -- the database's write buffer (above)
let refused = new Map<string, { accountId: string | null; hour: Date; unauthorized: number; rateLimited: number }>();
// eslint-disable-next-line no-restricted-syntax -- the database's write buffer (above)
let timer: NodeJS.Timeout | null = null;
// eslint-disable-next-line no-restricted-syntax -- the database's write buffer (above)
const writing = new Set<Promise<void>>();
const warnDropped = countedWarning('request log entries dropped: the database is not keeping up');

/** Entries and estimated bytes of the request log held in this process (queued and being written). */
export const requestLogHeld = () => hold.held();

/** 401 and 429 answers are counted per account and hour (refusedRequestsModel.ts), not logged one by one. */
export const isRefusal = (status: number) => status === 401 || status === 429;

/** `entry`'s bodies are the request's own text, unredacted: flushRequestLogs redacts them before writing. */
export function recordRequest(entry: RequestLogRecord): void {
  if (isRefusal(entry.status)) return countRefusedRequest(entry.account_id, entry.status, entry.created_at);
  const dropped = hold.add(entry);
  if (dropped > 0) {
    requestLogDropped.inc(dropped);
    warnDropped(dropped, hold.held());
  }
  if (hold.queued >= BATCH_MAX) sendQueued(false);
  else scheduleFlush();
}

/** Counts a 401 or 429 answer of `accountId` (null: none known) in its hour; written with the next flush. */
export function countRefusedRequest(accountId: string | null, status: number, at: Date = new Date()): void {
  const hour = new Date(Math.floor(at.getTime() / 3_600_000) * 3_600_000);
  const id = `${accountId ?? '-'}:${hour.toISOString()}`;
  let counts = refused.get(id);
  if (!counts) refused.set(id, (counts = { accountId, hour, unauthorized: 0, rateLimited: 0 }));
  if (status === 401) counts.unauthorized++;
  else counts.rateLimited++;
  scheduleFlush();
}

function scheduleFlush(): void {
  if (timer) return;
  timer = setTimeout(() => sendAll(false), FLUSH_MS);
  timer.unref();
}

/** Writes what is queued; resolves once every write started so far has ended (whatever its outcome). */
export async function flushRequestLogs(): Promise<void> {
  sendAll(true);
  await Promise.all([...writing]);
}

/** The refusal counts, and the queued entries: all of them, or as sendQueued(false) does. */
function sendAll(all: boolean): void {
  if (timer) clearTimeout(timer);
  timer = null;
  const counts = refused;
  refused = new Map();
  if (counts.size > 0) track(writeRefusedCounts(counts));
  sendQueued(all);
}

/** The queued entries in inserts of BATCH_MAX: all of them, or while fewer than INSERTS_IN_FLIGHT_MAX are under way. */
function sendQueued(all: boolean): void {
  while (hold.queued > 0 && (all || insertsInFlight < INSERTS_IN_FLIGHT_MAX)) {
    // The redaction and cut of the bodies happen here, in the batch write, not on each request's path.
    insert(hold.take(BATCH_MAX, withLoggedBodies));
  }
}

function insert(batch: TakenBatch): void {
  insertsInFlight++;
  // The entries of a key go in one document (requestLogBatchModel.ts), complete and plain: the
  // driver's insert skips mongoose's per-document casting and validation.
  const collection = driverCollection<RequestLogBatchRecord>(RequestLogBatchModel);
  track(
    collection
      .insertMany(batchDocuments(batch.entries, entryBytes), { ordered: false })
      .then(
        () => undefined,
        (err: unknown) => logger.warn({ err, entries: batch.entries.length }, 'could not record request log entries'),
      )
      .finally(() => {
        insertsInFlight--;
        hold.written(batch);
        // Entries that waited for this insert to end go now, or with the next timer.
        if (hold.queued >= BATCH_MAX) sendQueued(false);
        else if (hold.queued > 0) scheduleFlush();
      }),
  );
}

function withLoggedBodies(entry: RequestLogRecord): RequestLogRecord {
  const bodies = loggedBodies(entry.request_body, entry.response_body);
  return { ...entry, request_body: bodies.request, response_body: bodies.response, facets: logFacets(entry) };
}

function track(write: Promise<void>): void {
  writing.add(write);
  void write.finally(() => writing.delete(write));
}

/**
 * One `$inc` upsert per account and hour. The log line is where an operator sees them without a
 * database client: `refused requests counted` with each account's counts of this flush.
 */
async function writeRefusedCounts(counts: Map<string, { accountId: string | null; hour: Date; unauthorized: number; rateLimited: number }>): Promise<void> {
  const collection = driverCollection<RefusedRequestsRecord>(RefusedRequestsModel);
  const ops = [...counts].map(([_id, c]) => ({
    updateOne: {
      filter: { _id },
      update: { $setOnInsert: { account_id: c.accountId, hour: c.hour }, $inc: { unauthorized: c.unauthorized, rate_limited: c.rateLimited } },
      upsert: true,
    },
  }));
  try {
    await collection.bulkWrite(ops, { ordered: false });
  } catch (err) {
    // Two processes upserting the same new hour: one insert loses with a duplicate key; the document
    // exists now, so the same $inc again lands (it is not applied twice: the failed statement wrote nothing).
    if (!isDuplicateKey(err)) return void logger.warn({ err }, 'could not count refused requests');
    const failed = new Set(((err as { writeErrors?: Array<{ index: number }> }).writeErrors ?? []).map((e) => e.index));
    await collection.bulkWrite(ops.filter((_, i) => failed.has(i)), { ordered: false }).catch((retryErr: unknown) => logger.warn({ err: retryErr }, 'could not count refused requests'));
  }
  logger.info(
    { refused: [...counts.values()].map((c) => ({ accountId: c.accountId, hour: c.hour, unauthorized: c.unauthorized, rateLimited: c.rateLimited })) },
    'refused requests counted',
  );
}

/** The refusal counts of an account (null: those that named none), hour by hour, oldest first. */
export async function refusedRequestCounts(accountId: string | null): Promise<RefusedRequestsRecord[]> {
  await flushRequestLogs();
  return RefusedRequestsModel.find({ account_id: accountId }).sort({ hour: 1 }).lean<RefusedRequestsRecord[]>();
}

/**
 * The requests made with the caller's own key, newest first: the spec lists "log entries for requests
 * made with the caller's key", so a restricted key never sees what the account's other keys did. What
 * this process holds is written first, so a process always lists its own requests.
 */
export async function listRequestLogs(
  callerKey: Pick<ApiKeyRecord, '_id' | 'account_id'>,
  limit: number,
  opts: { includeDashboard?: boolean } & LogFilter = {},
): Promise<RequestLogRecord[]> {
  await flushRequestLogs();
  return readRequestLogs(callerKey, limit, opts);
}

export function toLogEntryResource(r: RequestLogRecord): LogEntryResource {
  return {
    request_id: r._id,
    method: r.method,
    path: r.path,
    status: r.status,
    error_code: r.error_code,
    latency_ms: r.latency_ms,
    created_at: r.created_at.toISOString(),
    source: r.source ?? 'api',
    request_body: r.request_body ?? null,
    response_body: r.response_body ?? null,
  };
}
