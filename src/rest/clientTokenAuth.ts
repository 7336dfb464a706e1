import type { Request, Response } from 'express';
import type { Config } from '../config';
import { isClientTokenLike } from '../domain/clientTokens/clientToken.service';
import { authorize } from '../operations/authorize';
import type { OperationId } from '../operations/contract';
import { authenticateClientTokenRequest } from '../operations/http/authenticate';
import { bearerSecret } from '../operations/bearer';

/**
 * Client tokens on REST. The token comes in `?client_token=` (EventSource cannot send headers) or, on
 * any route, as `Authorization: Bearer ct_test_…`. Each request made with a token counts in the token's
 * own window (same limit as a key's); the request's log line names the token by its id.
 */

/** The token a request carries, if any (undefined when it carries none). A repeated parameter is no token. */
export function clientTokenOf(req: Request): string | undefined {
  const bearer = bearerSecret(req.headers.authorization);
  if (isClientTokenLike(bearer)) return bearer;
  const query = (req.query as Record<string, unknown>).client_token;
  if (query === undefined) return undefined;
  return typeof query === 'string' ? query : '';
}

/**
 * On a route that needs a key: a request made with a client token (as its bearer, or without a bearer
 * but with `client_token`) is answered 401 when the token does not work, 403 when it does (a token reads
 * one payment's public view and nothing else).
 */
export async function refuseClientTokenOnKeyRoute(req: Request, res: Response, operationId: OperationId, config: Config): Promise<void> {
  const bearer = bearerSecret(req.headers.authorization);
  const token = isClientTokenLike(bearer) ? bearer : req.headers.authorization === undefined ? clientTokenOf(req) : undefined;
  if (token === undefined) return;
  // authorize refuses a client token on every operation that needs a key (403).
  authorize(await authenticateClientTokenRequest(token, res, config), operationId);
}

