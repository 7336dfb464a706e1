import type { Response } from 'express';

/**
 * The bodies a request's log entry shows (GET /logs), kept by reference to text the request already
 * had: the request body as read, the answer as serialized to be written. Nothing is copied, parsed or
 * redacted here; the log's batch write does that (src/domain/logs/logBodies.ts), off the request.
 * Streams and answers written in pieces keep nothing (their entry's body is null).
 */
export function keepRequestBody(res: Response | undefined, text: string): void {
  if (res) res.locals.loggedRequestBody = text;
}

export function keepResponseBody(res: Response, text: string): void {
  res.locals.loggedResponseBody = text;
}

export function keptBodies(res: Response): { request: string | null; response: string | null } {
  return { request: (res.locals.loggedRequestBody as string | undefined) ?? null, response: (res.locals.loggedResponseBody as string | undefined) ?? null };
}

/** The signed-in dashboard's own requests are told apart in the log (and hidden from it by default). */
export function markDashboardRequest(res: Response): void {
  res.locals.fromDashboard = true;
}

export function requestSource(res: Response): 'api' | 'dashboard' {
  return res.locals.fromDashboard === true ? 'dashboard' : 'api';
}
