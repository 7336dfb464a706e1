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

export async function recordRequest(entry: RequestLogRecord): Promise<void> {
  await RequestLogModel.create(entry);
}

export async function listRequestLogs(accountId: string, limit: number): Promise<RequestLogRecord[]> {
  return RequestLogModel.find({ account_id: accountId })
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
