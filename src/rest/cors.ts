import cors from 'cors';
import type { Request, RequestHandler } from 'express';
import type { Config } from '../config';
import { isClientTokenLike } from '../domain/clientTokens/clientTokenService';
import { bearerSecret } from '../operations/bearer';
import { GRAPHQL_PATH } from '../http/paths';

/**
 * CORS for what a merchant's own frontend calls with a client token, and nothing else: the public payment
 * routes, and `POST /graphql` only with a client token, so a browser on another origin cannot read a key's
 * answer. Preflights of both are answered (the grant is harmless). Any origin unless CORS_ORIGINS narrows it;
 * never credentials. More: docs/decisions/notes/edge.md, "CORS".
 */
export function clientTokenCors(config: Pick<Config, 'corsOrigins'>): RequestHandler {
  const handler = cors({
    origin: config.corsOrigins ?? '*',
    credentials: false,
    methods: ['GET', 'POST', 'OPTIONS'],
    allowedHeaders: ['Authorization', 'Content-Type', 'Last-Event-ID'],
    // What a frontend may read of an answer: its id (for support) and its rate-limit state.
    // Deprecation, Sunset and Link: what a deprecated parameter's answer says (rest/deprecation.ts).
    exposedHeaders: ['Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'Deprecation', 'Sunset', 'Link'],
    maxAge: 600,
    optionsSuccessStatus: 204,
  });
  // A plain test of the path rather than an Express Router of three routes: every request of the
  // gateway passes here, and a Router's layers cost each one a few regular expressions. Paths compare
  // as Express's default router did (case-insensitive, a trailing slash allowed).
  return (req, res, next) => {
    const path = req.path.toLowerCase();
    const tokenPaths = path === PUBLIC_PAYMENTS || path.startsWith(`${PUBLIC_PAYMENTS}/`);
    const graphql = path === GRAPHQL_PATH || path === `${GRAPHQL_PATH}/`;
    if (tokenPaths || (graphql && (req.method === 'OPTIONS' || (req.method === 'POST' && isClientTokenRequest(req))))) {
      handler(req, res, next);
      return;
    }
    next();
  };
}

const PUBLIC_PAYMENTS = '/v1/public/payments';

function isClientTokenRequest(req: Request): boolean {
  return isClientTokenLike(bearerSecret(req.headers.authorization));
}
