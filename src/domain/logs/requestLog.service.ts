import type { mongo } from 'mongoose';
import { logger } from '../../logger';
import type { ApiKeyRecord } from '../accounts/apiKey.model';
import { RequestLogModel, type RequestLogRecord } from './requestLog.model';

export interface LogEntryResource {
  request_id: string;
  method: string;
  path: string;
  status: number;
  error_code: string | null;
  latency_ms: number;
  created_at: string;
}

/**
 * Request log entries are written in batches, one insert per FLUSH_MS (or per BATCH_MAX entries),
 * rather than one insert per request: that took a database round trip off every authenticated request
 * (see bench/README.md). Listing flushes first, so a process always lists its own requests; those
 * of another gateway process appear within FLUSH_MS. Shutdown flushes too (requestLogService).
 */
const FLUSH_MS = 20;
const BATCH_MAX = 500;

let queued: RequestLogRecord[] = [];
let timer: NodeJS.Timeout | null = null;
const writing = new Set<Promise<void>>();

export function recordRequest(entry: RequestLogRecord): void {
  queued.push(entry);
  if (queued.length >= BATCH_MAX) void flushRequestLogs();
  else if (!timer) {
    timer = setTimeout(() => void flushRequestLogs(), FLUSH_MS);
    timer.unref();
  }
}

/** Writes what is queued; resolves once every write started so far has ended (whatever its outcome). */
export async function flushRequestLogs(): Promise<void> {
  if (timer) clearTimeout(timer);
  timer = null;
  const batch = queued;
  queued = [];
  if (batch.length > 0) {
    // The entries are complete plain documents: the driver's insert skips mongoose's per-document
    // casting and validation.
    const collection = RequestLogModel.collection as unknown as mongo.Collection<RequestLogRecord>;
    const write = collection.insertMany(batch, { ordered: false }).then(
      () => undefined,
      (err: unknown) => logger.warn({ err, entries: batch.length }, 'could not record request log entries'),
    );
    writing.add(write);
    void write.finally(() => writing.delete(write));
  }
  await Promise.all([...writing]);
}

/**
 * The requests made with the caller's own key, newest first: the spec lists "log entries for requests
 * made with the caller's key", so a restricted key never sees what the account's other keys did. The
 * account stays in the filter as well (a key belongs to one account; this keeps the guard explicit).
 */
export async function listRequestLogs(callerKey: Pick<ApiKeyRecord, '_id' | 'account_id'>, limit: number): Promise<RequestLogRecord[]> {
  await flushRequestLogs();
  return RequestLogModel.find({ account_id: callerKey.account_id, api_key_id: callerKey._id })
    .sort({ created_at: -1 })
    .limit(limit)
    .lean<RequestLogRecord[]>();
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
  };
}
