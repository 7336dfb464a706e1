import type { Response } from 'express';
import type { Config } from '../../config';
import type { AuthenticatedKey } from '../../domain/accounts/apiKey.service';
import { authenticateClientToken, authenticateKey, countedKey, type ClientTokenCaller, type KeyCaller } from '../caller';
import { applyCount } from './rateLimit';

/**
 * Authentication on an HTTP request (REST and POST /graphql): the caller from ../caller.ts, its count
 * written as X-RateLimit-* (429 over the limit), and what the request log names (res.locals).
 */

/** The bearer key, counted (401, 429). */
export async function authenticateKeyRequest(secret: string | undefined, res: Response, config: Config): Promise<KeyCaller> {
  const { auth } = await authenticateKey(secret, config);
  return acceptKey(auth, res, config);
}

/** A key already found and counted (the dashboard session's): logged, its count applied. */
export function acceptKey(auth: AuthenticatedKey, res: Response, config: Pick<Config, 'rateLimitPerMinute'>): KeyCaller {
  const { caller, count } = countedKey(auth, config);
  res.locals.auth = auth;
  applyCount(res, count);
  return caller;
}

/** A client token (401 when it does not work), counted in its own window (429 with the token's X-RateLimit-*). */
export async function authenticateClientTokenRequest(token: string, res: Response, config: Pick<Config, 'rateLimitPerMinute'>): Promise<ClientTokenCaller> {
  const { caller, count } = await authenticateClientToken(token, config);
  res.locals.clientTokenId = caller.grant.id;
  applyCount(res, count);
  return caller;
}
