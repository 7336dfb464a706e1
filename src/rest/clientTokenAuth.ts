import type { Request, Response } from 'express';
import type { Config } from '../config';
import { ApiError } from '../errors';
import { clientTokenRefused, isClientTokenLike, requireGrantFor, type ClientTokenGrant } from '../domain/clientTokens/clientToken.service';
import { authenticateClientTokenRequest } from '../operations/http/authenticate';
import { bearerToken } from './pipeline';

/**
 * Client tokens on REST. The token comes in `?client_token=` (EventSource cannot send headers) or, on
 * any route, as `Authorization: Bearer ct_test_…`. Each request made with a token counts in the token's
 * own window (same limit as a key's); the request's log line names the token by its id.
 */

/** The token a request carries, if any (undefined when it carries none). A repeated parameter is no token. */
export function clientTokenOf(req: Request): string | undefined {
  const bearer = bearerToken(req);
  if (isClientTokenLike(bearer)) return bearer;
  const query = (req.query as Record<string, unknown>).client_token;
  if (query === undefined) return undefined;
  return typeof query === 'string' ? query : '';
}

/**
 * On a route that takes a client token: the grant when the request carries one (null when it carries
 * none, and the route answers as its public self).
 */
export async function optionalClientToken(req: Request, res: Response, config: Config): Promise<ClientTokenGrant | null> {
  const token = clientTokenOf(req);
  return token === undefined ? null : (await authenticateClientTokenRequest(token, res, config)).grant;
}

/**
 * On a route that needs a key: a request made with a client token (as its bearer, or without a bearer
 * but with `client_token`) is answered 401 when the token does not work, 403 when it does (a token reads
 * one payment's public view and nothing else).
 */
export async function refuseClientTokenOnKeyRoute(req: Request, res: Response, config: Config): Promise<void> {
  const bearer = bearerToken(req);
  const token = isClientTokenLike(bearer) ? bearer : req.headers.authorization === undefined ? clientTokenOf(req) : undefined;
  if (token === undefined) return;
  await authenticateClientTokenRequest(token, res, config);
  throw new ApiError('permission_denied', 'A client token reads only its payment (GET /v1/public/payments/{id} and its events); this route needs an API key.');
}

/** The grant a token route's handler received; 401 when it is missing or for another payment. */
export function grantFor(grant: ClientTokenGrant | undefined, paymentId: string): ClientTokenGrant {
  if (!grant) throw clientTokenRefused();
  requireGrantFor(grant, paymentId);
  return grant;
}
