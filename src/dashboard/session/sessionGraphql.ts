import type { IncomingHttpHeaders } from 'node:http';
import type { Config } from '../../config';
import type { AuthenticatedKey } from '../../domain/accounts/apiKeyService';
import { keyRateLimits } from '../../operations/rateLimitPolicy';
import { requireCsrfSafe, requireSameOriginIfSent } from './sessionHttp';
import { authenticateSessionAndCount } from './sessionService';

/**
 * `POST /graphql` with the session cookie: refused before anything runs unless CSRF-safe (400
 * `invalid_request`) and, when an `Origin` is sent, same-origin (403 `permission_denied`); then the
 * session's key, counted in its rate-limit windows (401 when the session no longer works).
 */
export async function authenticateSessionRequest(session: string, headers: IncomingHttpHeaders, config: Config): Promise<AuthenticatedKey> {
  requireCsrfSafe(headers);
  requireSameOriginIfSent(headers, config);
  return authenticateSessionAndCount(session, keyRateLimits(config));
}
