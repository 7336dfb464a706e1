import { Router, type Request, type Response } from 'express';
import type { Config } from '../config';
import { ApiError } from '../errors';
import { readJsonBody } from '../http/body';
import { clientIp, enforceRateLimit } from '../http/rateLimit';
import { clearedSessionCookie, requireSameOriginIfSent, sessionCookieOf, sessionSetCookie } from '../http/sessionCookie';
import { createSession, deleteSession, describeSession } from '../domain/sessions/sessionService';
import { ipBucket } from '../operations/rateLimitPolicy';

export const SESSION_PATH = '/dashboard/session';

/**
 * `POST /dashboard/session` (sign in with `{"key": "sk_test_…"}`), `GET` (who is signed in, or 401) and
 * `DELETE` (sign out). These are the dashboard's routes, not the API's: errors use the API's envelope,
 * and each request counts in the per-IP bucket of the public routes (429 over it). The session itself
 * is the domain's (src/domain/sessions), its cookie src/http/sessionCookie.ts.
 */
export function dashboardSessionRouter(config: Config): Router {
  const router = Router();
  const countPerIp = (req: Request, res: Response) => enforceRateLimit(res, ipBucket('public', clientIp(req)), config.publicRateLimitPerMinute);

  router.post(SESSION_PATH, async (req, res) => {
    await countPerIp(req, res);
    requireSameOriginIfSent(req.headers, config);
    // A form on another site can post urlencoded, multipart or text/plain bodies without a preflight,
    // never JSON: a JSON-only route cannot be the target of a cross-site form.
    const type = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json') throw ApiError.invalid("Sign in with 'Content-Type: application/json' and the body {\"key\": \"sk_test_...\"}");
    const body = await readJsonBody(req, config.maxBodyBytes);
    const key = (body as { key?: unknown } | undefined)?.key;
    if (typeof body !== 'object' || body === null || Array.isArray(body) || typeof key !== 'string') {
      throw ApiError.invalid('The request body must be {"key": "sk_test_..."}: a secret or restricted API key');
    }
    const { value, resource } = await createSession(key);
    res.setHeader('Set-Cookie', sessionSetCookie(value, config));
    res.setHeader('Cache-Control', 'no-store');
    res.status(200).json(resource);
  });

  router.get(SESSION_PATH, async (req, res) => {
    await countPerIp(req, res);
    res.setHeader('Cache-Control', 'no-store');
    res.status(200).json(await describeSession(sessionCookieOf(req.headers)));
  });

  router.delete(SESSION_PATH, async (req, res) => {
    await countPerIp(req, res);
    requireSameOriginIfSent(req.headers, config);
    await deleteSession(sessionCookieOf(req.headers));
    res.setHeader('Set-Cookie', clearedSessionCookie(config));
    res.status(200).json({ object: 'dashboard_session', deleted: true });
  });

  return router;
}
