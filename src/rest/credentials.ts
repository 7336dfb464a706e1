import type { Request } from 'express';
import { isClientTokenLike } from '../domain/clientTokens/clientTokenService';
import type { Credentials } from '../operations/admit';
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
 * The credentials of a REST request. A public operation takes a client token where the contract declares
 * its `client_token` parameter, else nothing (the client IP's bucket counts it). Every other operation
 * takes the bearer key; a client token sent there (as its bearer, or without a bearer but with
 * `client_token`) is authenticated as the token, so that it is answered 401 when it does not work and
 * 403 when it does (authorize: a token reads one payment's public view and nothing else).
 */
export function restCredentials(req: Request, isPublic: boolean, takesClientToken: boolean): Credentials {
  if (isPublic) {
    const token = takesClientToken ? clientTokenOf(req) : undefined;
    return token === undefined ? { kind: 'none' } : { kind: 'clientToken', token };
  }
  const bearer = bearerSecret(req.headers.authorization);
  const token = isClientTokenLike(bearer) ? bearer : req.headers.authorization === undefined ? clientTokenOf(req) : undefined;
  return token === undefined ? { kind: 'key', secret: bearer } : { kind: 'clientToken', token };
}
