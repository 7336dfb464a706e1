import type { IncomingHttpHeaders } from 'node:http';
import type { Config } from '../config';
import { ApiError } from '../errors';

/**
 * The HTTP side of dashboard sessions (src/domain/sessions): the `pgw_session` cookie and the
 * same-origin rules that keep a page on another site from using it (contract decisions, "Sandbox
 * dashboard"). Here, under the protocols, because the dashboard's sign-in routes set it and GraphQL
 * over HTTP and WebSocket read it.
 */
export const SESSION_COOKIE = 'pgw_session';

/** The session cookie's value in a `Cookie` header (the first one when repeated), or undefined. */
export function sessionCookieOf(headers: IncomingHttpHeaders): string | undefined {
  const header = headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

/** Flags fixed by the contract; `Secure` when the gateway is served over https. No Max-Age: the server ends it. */
export function sessionSetCookie(value: string, config: Pick<Config, 'publicBaseUrl'>): string {
  return `${SESSION_COOKIE}=${value}; HttpOnly; SameSite=Strict; Path=/${secure(config)}`;
}

/** What sign-out sends: the same cookie, empty and already expired. */
export function clearedSessionCookie(config: Pick<Config, 'publicBaseUrl'>): string {
  return `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0${secure(config)}`;
}

const secure = (config: Pick<Config, 'publicBaseUrl'>) => (new URL(config.publicBaseUrl).protocol === 'https:' ? '; Secure' : '');

/**
 * The origins a cookie request may come from: PUBLIC_BASE_URL's. When PUBLIC_BASE_URL is not set, its
 * default (http://localhost:PORT) names this machine, so the same port on 127.0.0.1 and [::1] is the
 * same server and is accepted too (a browser opened on http://127.0.0.1:PORT/dashboard works).
 */
export function sameOrigins(config: Pick<Config, 'publicBaseUrl' | 'publicBaseUrlFromEnv'>): string[] {
  const base = new URL(config.publicBaseUrl);
  if (config.publicBaseUrlFromEnv) return [base.origin];
  return ['localhost', '127.0.0.1', '[::1]'].map((host) => `${base.protocol}//${host}${base.port ? `:${base.port}` : ''}`);
}

const crossOrigin = () =>
  new ApiError('permission_denied', 'Dashboard sessions are same-origin only: this request comes from another origin (Origin header).');

/**
 * HTTP requests made with the cookie, and sign-in: an `Origin` header (browsers send one on every
 * cross-origin request and on same-origin POSTs) must be the gateway's own; 403 otherwise. A request
 * without one does not come from another site's page.
 */
export function requireSameOriginIfSent(headers: IncomingHttpHeaders, config: Pick<Config, 'publicBaseUrl' | 'publicBaseUrlFromEnv'>): void {
  const origin = headers.origin;
  if (origin !== undefined && !sameOrigins(config).includes(origin)) throw crossOrigin();
}

/** The WebSocket upgrade with a cookie: browsers always send `Origin` there, so it must be present and ours. */
export function isSameOriginUpgrade(headers: IncomingHttpHeaders, config: Pick<Config, 'publicBaseUrl' | 'publicBaseUrlFromEnv'>): boolean {
  return headers.origin !== undefined && sameOrigins(config).includes(headers.origin);
}

/**
 * CSRF rule of cookie requests to POST /graphql (Apollo Server's rule): a JSON body, which a form on
 * another site cannot send without a CORS preflight, or the `apollo-require-preflight` header, which
 * it cannot set. 400 `invalid_request` otherwise, before anything runs.
 */
export function requireCsrfSafe(headers: IncomingHttpHeaders): void {
  const type = String(headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json' || headers['apollo-require-preflight'] !== undefined) return;
  throw ApiError.invalid(
    "A request authenticated by the dashboard session must be sent with 'Content-Type: application/json' (or the 'apollo-require-preflight' header): cross-site form posts are refused.",
  );
}
