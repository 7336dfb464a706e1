import mongoose, { Schema } from 'mongoose';
import { RETENTION } from '../../config';

/**
 * One API request made with an account's key (GET /logs). Its bodies are stored redacted and cut
 * (logBodies.ts); headers never. Entries written before `source` existed have none: they were `api`.
 */
export interface RequestLogRecord {
  _id: string;
  account_id: string;
  api_key_id: string | null;
  method: string;
  path: string;
  status: number;
  error_code: string | null;
  latency_ms: number;
  created_at: Date;
  source?: 'api' | 'dashboard';
  request_body?: string | null;
  response_body?: string | null;
  /** What the dashboard's filters look for (logFacets.ts); absent on entries written before them. */
  facets?: string[];
}

const requestLogSchema = new Schema<RequestLogRecord>(
  {
    _id: { type: String, required: true },
    account_id: { type: String, required: true },
    api_key_id: { type: String, default: null },
    method: { type: String, required: true },
    path: { type: String, required: true },
    status: { type: Number, required: true },
    error_code: { type: String, default: null },
    latency_ms: { type: Number, required: true },
    created_at: { type: Date, required: true },
    source: { type: String, default: 'api' },
    request_body: { type: String, default: null },
    response_body: { type: String, default: null },
    facets: { type: [String], default: undefined },
  },
  { versionKey: false, collection: 'request_logs' },
);
// GET /logs lists one key's requests newest first (the account's other keys' are not the caller's).
requestLogSchema.index({ account_id: 1, api_key_id: 1, created_at: -1 });
// The dashboard's filters (method, status class, path, source: logFacets.ts), newest first: one multikey
// index serves each of them, where an index per filter would cost four more keys per request. An entry
// adds about six keys here; its insert is batched (requestLogService.ts), not on the request's path.
requestLogSchema.index({ account_id: 1, api_key_id: 1, facets: 1, created_at: -1 });
// Entries leave REQUEST_LOG_RETENTION_DAYS (30) after the request: GET /logs shows the newest 100 at
// most, and without an end the collection would grow by one document per request for ever.
requestLogSchema.index({ created_at: 1 }, { name: 'created_at_ttl', expireAfterSeconds: RETENTION.requestLogSeconds });

export const RequestLogModel = mongoose.model<RequestLogRecord>('RequestLog', requestLogSchema);
