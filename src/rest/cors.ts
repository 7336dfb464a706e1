import cors from 'cors';
import { Router, type Request, type RequestHandler } from 'express';
import type { Config } from '../config';
import { isClientTokenLike } from '../domain/clientTokens/clientToken.service';
import { bearerSecret } from '../operations/bearer';
import { GRAPHQL_PATH } from '../operations/http/paths';

/**
 * CORS for what a merchant's own frontend calls with a client token, and for nothing else:
 * - `/v1/public/payments/…` (the token's read and stream; they take no key and no cookie), always;
 * - `POST /graphql` only when it is authenticated by a client token (`Authorization: Bearer ct_test_…`).
 *   A request with a key (or, for a dashboard, a cookie) gets no CORS header, so a browser on another
 *   origin cannot read its answer.
 * Preflights (OPTIONS) of both paths are answered: the preflight carries no Authorization value, so it
 * cannot tell a token from a key; granting it is harmless since the answer to a key request has no
 * `Access-Control-Allow-Origin`.
 *
 * Any origin (`*`), never credentials; env CORS_ORIGINS (comma-separated origins) narrows it to those,
 * echoed back with `Vary: Origin`. The `cors` package does the header work (preflight, Vary, lists).
 */
export function clientTokenCors(config: Pick<Config, 'corsOrigins'>): Router {
  const handler = cors({
    origin: config.corsOrigins ?? '*',
    credentials: false,
    methods: ['GET', 'POST', 'OPTIONS'],
    allowedHeaders: ['Authorization', 'Content-Type', 'Last-Event-ID'],
    // What a frontend may read of an answer: its id (for support) and its rate-limit state.
    exposedHeaders: ['Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After'],
    maxAge: 600,
    optionsSuccessStatus: 204,
  });
  const router = Router();
  router.use('/v1/public/payments', handler);
  router.options(GRAPHQL_PATH, handler);
  router.post(GRAPHQL_PATH, onlyWhen(isClientTokenRequest, handler));
  return router;
}

function isClientTokenRequest(req: Request): boolean {
  return isClientTokenLike(bearerSecret(req.headers.authorization));
}

function onlyWhen(test: (req: Request) => boolean, handler: RequestHandler): RequestHandler {
  return (req, res, next) => (test(req) ? handler(req, res, next) : next());
}
