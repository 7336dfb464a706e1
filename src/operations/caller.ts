import type { Config } from '../config';
import type { ApiKeyRecord } from '../domain/accounts/apiKeyModel';
import { authenticateAndCount, type AuthenticatedKey } from '../domain/accounts/apiKeyService';
import {
  authenticateClientToken as findClientToken,
  clientTokenBucket,
  clientTokenRefused,
  requireGrantFor,
  type ClientTokenGrant,
} from '../domain/clientTokens/clientTokenService';
import type { Actor } from '../domain/payments/actor';
import { hitRateLimit } from '../domain/ratelimit/rateLimitService';
import { keyRateLimits, type RateCount } from './rateLimitPolicy';

/**
 * Who calls an operation, whatever the protocol: an API key, a client token (one payment's public view),
 * or nobody (a public operation, counted per client IP). Every surface authenticates here, once, and
 * hands the Caller to authorize/execute.
 */
export type Caller = KeyCaller | ClientTokenCaller | PublicCaller;

export interface KeyCaller {
  kind: 'key';
  key: ApiKeyRecord;
  actor: Actor;
}

export interface ClientTokenCaller {
  kind: 'clientToken';
  grant: ClientTokenGrant;
  actor: Actor;
}

export interface PublicCaller {
  kind: 'public';
}

export const PUBLIC_CALLER: PublicCaller = { kind: 'public' };

/** A caller and the request's count in its rate-limit window (enforced by the protocol: it writes the headers). */
export interface Counted<C extends Caller> {
  caller: C;
  count: RateCount;
}

export function keyCaller(key: ApiKeyRecord): KeyCaller {
  return { kind: 'key', key, actor: { accountId: key.account_id, apiKeyId: key._id } };
}

/** A key already authenticated and counted (authenticateAndCount). */
export function countedKey(auth: AuthenticatedKey, config: Pick<Config, 'rateLimitPerMinute'>): Counted<KeyCaller> {
  return { caller: keyCaller(auth.key), count: { decision: auth.rate, limit: config.rateLimitPerMinute } };
}

/**
 * The bearer key: found and counted in its window and its account's in one database round trip
 * (401 for any key that does not work).
 */
export async function authenticateKey(
  secret: string | undefined,
  config: Pick<Config, 'rateLimitPerMinute' | 'rateLimitPerAccountPerMinute'>,
): Promise<Counted<KeyCaller> & { auth: AuthenticatedKey }> {
  const auth = await authenticateAndCount(secret, keyRateLimits(config));
  return { ...countedKey(auth, config), auth };
}

/** A client token: found (401 when it does not work, expired or revoked) and counted in its own window. */
export async function authenticateClientToken(token: string, config: Pick<Config, 'rateLimitPerMinute'>): Promise<Counted<ClientTokenCaller>> {
  const grant = await findClientToken(token);
  const decision = await hitRateLimit(clientTokenBucket(grant.id), config.rateLimitPerMinute);
  return {
    caller: { kind: 'clientToken', grant, actor: { accountId: grant.accountId, apiKeyId: null } },
    count: { decision, limit: config.rateLimitPerMinute },
  };
}

/**
 * On an operation that takes a client token: the caller's grant for this payment; 401 when the caller
 * has no token or its token is for another payment.
 */
export function grantFor(caller: Caller, paymentId: string): ClientTokenGrant {
  if (caller.kind !== 'clientToken') throw clientTokenRefused();
  requireGrantFor(caller.grant, paymentId);
  return caller.grant;
}
