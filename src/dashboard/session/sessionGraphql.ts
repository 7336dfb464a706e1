import type { IncomingHttpHeaders } from 'node:http';
import type { Config } from '../../config';
import { requireCsrfSafe, requireSameOriginIfSent } from './sessionHttp';
import { authenticateSessionAndCount, type SessionRequest } from './sessionService';

/**
 * `POST /graphql` with the session cookie: refused before anything runs unless CSRF-safe (400
 * `invalid_request`) and, when an `Origin` is sent, same-origin (403 `permission_denied`); then the
 * session's key, the request counted in the session's own window (401 when the session no longer works).
 */
export async function authenticateSessionRequest(session: string, headers: IncomingHttpHeaders, config: Config): Promise<SessionRequest> {
  requireCsrfSafe(headers);
  requireSameOriginIfSent(headers, config);
  return authenticateSessionAndCount(session, config.dashboardRateLimitPerMinute);
}
