import type { ApiKeyRecord } from '../accounts/apiKeyModel';
import { logEntryMatcher, logFilterQuery, logFilterTerms, type LogFilter } from './logFacets';
import { RequestLogBatchModel, type RequestLogBatchRecord } from './requestLogBatchModel';
import { RequestLogModel, type RequestLogRecord } from './requestLogModel';

/**
 * The stored request log, read and deleted: documents of entries (requestLogBatchModel.ts), and the
 * entries stored one per document before them (`request_logs`, read until their retention ends them).
 */

/** Newest first; equal times by request id, so that two reads list them in the same order. */
const newestFirst = (a: RequestLogRecord, b: RequestLogRecord) =>
  b.created_at.getTime() - a.created_at.getTime() || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0);

/** Documents a listing reads in its first round trip (most end there), doubling up to LAST_PAGE after. */
const FIRST_PAGE = 4;
const LAST_PAGE = 64;

/** The newest `limit` entries of a key matching `opts`, newest first. */
export async function readRequestLogs(
  callerKey: Pick<ApiKeyRecord, '_id' | 'account_id'>,
  limit: number,
  opts: { includeDashboard?: boolean } & LogFilter,
): Promise<RequestLogRecord[]> {
  const terms = logFilterTerms(opts);
  // A filter without a source says nothing of it: the dashboard's entries stay out unless asked for.
  const excludeDashboard = !opts.source && !opts.includeDashboard;
  const matches = logEntryMatcher(terms, excludeDashboard);
  const key = { account_id: callerKey.account_id, api_key_id: callerKey._id };
  // Every entry of a document has its `src:` facet, so the default finds the documents holding one of the key's own.
  const facets = [...terms.facets, ...(excludeDashboard ? ['src:api'] : [])];
  const filter = { ...key, ...(facets.length > 0 ? { facets: facets.length === 1 ? facets[0] : { $all: facets } } : {}) };
  const found: RequestLogRecord[] = [];
  // Pages of documents, newest `last_at` first, each with a limit so that the database stops its walk
  // of the index there (an open cursor let the embedded engine read every document of the key first).
  // A document written between two pages shifts the next one back: it is seen again, and skipped here.
  const seen = new Set<string>();
  let skip = 0;
  let page = FIRST_PAGE;
  for (;;) {
    const docs = await RequestLogBatchModel.find(filter).sort({ last_at: -1 }).skip(skip).limit(page).lean<RequestLogBatchRecord[]>();
    for (const doc of docs) {
      // Once `limit` are found, a document whose newest entry is older than the last of them holds
      // none that would be listed, nor do those after it.
      if (found.length >= limit && doc.last_at.getTime() < found[limit - 1]!.created_at.getTime()) return withBefore(found);
      if (seen.has(doc._id)) continue;
      seen.add(doc._id);
      for (const entry of doc.entries) if (matches(entry)) found.push(entry);
      found.sort(newestFirst);
      if (found.length > limit) found.length = limit;
    }
    if (docs.length < page) return withBefore(found);
    skip += docs.length;
    page = Math.min(page * 2, LAST_PAGE);
  }

  async function withBefore(batched: RequestLogRecord[]): Promise<RequestLogRecord[]> {
    const before = await RequestLogModel.find({ ...key, ...logFilterQuery(terms), ...(excludeDashboard ? { source: { $ne: 'dashboard' } } : {}) })
      .sort({ created_at: -1 })
      .limit(limit)
      .lean<RequestLogRecord[]>();
    return before.length === 0 ? batched : [...batched, ...before].sort(newestFirst).slice(0, limit);
  }
}

/** Deletes an account's stored entries; resolves with how many there were. */
export async function deleteRequestLogs(accountId: string): Promise<number> {
  const account = { account_id: accountId };
  const [counted] = await RequestLogBatchModel.aggregate<{ n: number }>([{ $match: account }, { $group: { _id: null, n: { $sum: '$n' } } }]);
  const [, before] = await Promise.all([RequestLogBatchModel.deleteMany(account), RequestLogModel.deleteMany(account)]);
  return (counted?.n ?? 0) + before.deletedCount;
}
