import type { ApiKeyRecord } from '../accounts/apiKeyModel';
import { logEntryMatcher, logFilterQuery, queryFacets, type LogFilter } from './logFacets';
import { RequestLogBatchModel, type RequestLogBatchRecord } from './requestLogBatchModel';
import { RequestLogModel, type RequestLogRecord } from './requestLogModel';

/**
 * The stored request log, read and deleted: documents of entries (requestLogBatchModel.ts), and the
 * entries stored one per document before them (`request_logs`, read until their retention ends them).
 */

/** Newest first; equal times by request id, so that two reads list them in the same order. */
const newestFirst = (a: RequestLogRecord, b: RequestLogRecord) =>
  b.created_at.getTime() - a.created_at.getTime() || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0);

/** Documents a listing reads per round trip: most listings end in the first few. */
const DOCUMENTS_PER_READ = 8;

/** The newest `limit` entries of a key matching `opts`, newest first. */
export async function readRequestLogs(
  callerKey: Pick<ApiKeyRecord, '_id' | 'account_id'>,
  limit: number,
  opts: { includeDashboard?: boolean } & LogFilter,
): Promise<RequestLogRecord[]> {
  const narrowed = logFilterQuery(opts);
  // A filter without a source says nothing of it: the dashboard's entries stay out unless asked for.
  const excludeDashboard = !opts.source && !opts.includeDashboard;
  const matches = logEntryMatcher(narrowed, excludeDashboard);
  const key = { account_id: callerKey.account_id, api_key_id: callerKey._id };
  // Every entry of a document has its `src:` facet, so the default finds the documents holding one of the key's own.
  const facets = [...queryFacets(narrowed), ...(excludeDashboard ? ['src:api'] : [])];
  const filter = { ...key, ...(facets.length > 0 ? { facets: facets.length === 1 ? facets[0] : { $all: facets } } : {}) };
  const found: RequestLogRecord[] = [];
  const cursor = RequestLogBatchModel.find(filter).sort({ last_at: -1 }).batchSize(DOCUMENTS_PER_READ).lean<RequestLogBatchRecord>().cursor();
  try {
    for await (const doc of cursor as AsyncIterable<RequestLogBatchRecord>) {
      // Newest `last_at` first: once `limit` are found, a document whose newest entry is older than
      // the last of them holds none that would be listed.
      if (found.length >= limit && doc.last_at.getTime() < found[limit - 1]!.created_at.getTime()) break;
      for (const entry of doc.entries) if (matches(entry)) found.push(entry);
      found.sort(newestFirst);
      if (found.length > limit) found.length = limit;
    }
  } finally {
    await cursor.close();
  }
  const before = await RequestLogModel.find({ ...key, ...narrowed, ...(excludeDashboard ? { source: { $ne: 'dashboard' } } : {}) })
    .sort({ created_at: -1 })
    .limit(limit)
    .lean<RequestLogRecord[]>();
  return before.length === 0 ? found : [...found, ...before].sort(newestFirst).slice(0, limit);
}

/** Deletes an account's stored entries; resolves with how many there were. */
export async function deleteRequestLogs(accountId: string): Promise<number> {
  const account = { account_id: accountId };
  const [counted] = await RequestLogBatchModel.aggregate<{ n: number }>([{ $match: account }, { $group: { _id: null, n: { $sum: '$n' } } }]);
  const [, before] = await Promise.all([RequestLogBatchModel.deleteMany(account), RequestLogModel.deleteMany(account)]);
  return (counted?.n ?? 0) + before.deletedCount;
}
