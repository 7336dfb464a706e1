import mongoose, { Schema } from 'mongoose';
import { RETENTION } from '../../config';
import type { RequestLogRecord } from './requestLogModel';

/**
 * The request log as stored: one document per key and flush (requestLogService.ts), holding the entries
 * of that key the flush wrote, oldest first. One document per entry cost the database a document and
 * about nine index keys per request, more than a GET's own read (bench/HISTORY.md, "Issue 60"); here a
 * flush of a busy key is one document and a few keys. GET /logs reads whole documents newest first and
 * picks the entries (requestLogRead.ts).
 */
export interface RequestLogBatchRecord {
  _id: string;
  account_id: string;
  api_key_id: string | null;
  /** `created_at` of its oldest and newest entries. */
  first_at: Date;
  last_at: Date;
  /** How many entries it holds (what a sandbox reset reports deleted). */
  n: number;
  /** Every facet of its entries (logFacets.ts), so that a filter finds the documents holding a match. */
  facets: string[];
  entries: RequestLogRecord[];
}

const requestLogBatchSchema = new Schema<RequestLogBatchRecord>(
  {
    _id: { type: String, required: true },
    account_id: { type: String, required: true },
    api_key_id: { type: String, default: null },
    first_at: { type: Date, required: true },
    last_at: { type: Date, required: true },
    n: { type: Number, required: true },
    facets: { type: [String], default: [] },
    // Written by the driver whole and read lean: mongoose never casts them.
    entries: { type: Schema.Types.Mixed, default: () => [] },
  },
  { versionKey: false, collection: 'request_log_batches' },
);
// One key's entries newest first, and the same through the dashboard's filters (one multikey index
// over the facets of every entry a document holds).
requestLogBatchSchema.index({ account_id: 1, api_key_id: 1, last_at: -1 });
requestLogBatchSchema.index({ account_id: 1, api_key_id: 1, facets: 1, last_at: -1 });
// A document leaves REQUEST_LOG_RETENTION_DAYS (30) after its newest entry; a flush spans a fraction
// of a second, so each entry is kept as long as it was one by one.
requestLogBatchSchema.index({ last_at: 1 }, { name: 'last_at_ttl', expireAfterSeconds: RETENTION.requestLogSeconds });

export const RequestLogBatchModel = mongoose.model<RequestLogBatchRecord>('RequestLogBatch', requestLogBatchSchema);

/** A document's entries by their estimated bytes (requestLogHold.ts): well under BSON's 16 MiB at 500 of the largest. */
const DOCUMENT_MAX_BYTES = 4 * 1024 * 1024;

/**
 * The documents of one flush: its entries grouped by key, in the order they came, a key's entries
 * split where a document would pass DOCUMENT_MAX_BYTES. A document's `_id` is its first entry's
 * request id, unique as those are.
 */
export function batchDocuments(entries: readonly RequestLogRecord[], bytesOf: (entry: RequestLogRecord) => number): RequestLogBatchRecord[] {
  const documents: RequestLogBatchRecord[] = [];
  const open = new Map<string, { doc: RequestLogBatchRecord; facets: Set<string>; bytes: number }>();
  for (const entry of entries) {
    const key = `${entry.account_id}\u0000${entry.api_key_id ?? ''}`;
    const bytes = bytesOf(entry);
    let current = open.get(key);
    if (!current || current.bytes + bytes > DOCUMENT_MAX_BYTES) {
      const doc: RequestLogBatchRecord = {
        _id: entry._id,
        account_id: entry.account_id,
        api_key_id: entry.api_key_id,
        first_at: entry.created_at,
        last_at: entry.created_at,
        n: 0,
        facets: [],
        entries: [],
      };
      documents.push(doc);
      open.set(key, (current = { doc, facets: new Set(), bytes: 0 }));
    }
    const { doc } = current;
    doc.entries.push(entry);
    doc.n++;
    current.bytes += bytes;
    if (entry.created_at < doc.first_at) doc.first_at = entry.created_at;
    if (entry.created_at > doc.last_at) doc.last_at = entry.created_at;
    for (const facet of entry.facets ?? []) {
      if (current.facets.has(facet)) continue;
      current.facets.add(facet);
      doc.facets.push(facet);
    }
  }
  return documents;
}
