import type { Config } from '../config';
import type { ApiKeyRecord } from '../domain/accounts/apiKey.model';
import type { ClientTokenGrant } from '../domain/clientTokens/clientToken.service';
import { authenticationFailed } from '../domain/accounts/apiKey.service';
import { keyAllows, type Requirement } from '../domain/accounts/permissions';
import type { Actor } from '../domain/payments/actor';
import { ApiError } from '../errors';
import { getOperation, type OperationId } from '../rest/generatedContract';
import { createLoaders, type Loaders } from './loaders';

/** What every resolver gets: who is calling (one request over HTTP, one operation over WebSocket). */
export interface GraphQLContext {
  requestId: string;
  actor: Actor;
  key: ApiKeyRecord;
  /** False for a request sent without a key (only public fields run then; see KeylessContext). */
  authenticated: boolean;
  /** The client's address, which the per-IP limits of public fields count (as REST's public routes). */
  clientIp: string;
  config: Config;
  /** Per-request DataLoaders: a list never queries once per item. */
  loaders: Loaders;
  /** Error codes of the answer, for the request log (GET /logs `error_code`). */
  errorCodes: string[];
  /** Set when a client token authenticated the request (clientTokenAuth.ts); `key` is then refused. */
  clientToken?: ClientTokenGrant;
}

/** `transport` 'ws': one context serves every message of a subscription, so loaders do not cache. */
export function createContext(
  auth: { key: ApiKeyRecord },
  requestId: string,
  config: Config,
  clientIp: string,
  transport: 'http' | 'ws' = 'http',
): GraphQLContext {
  const actor: Actor = { accountId: auth.key.account_id, apiKeyId: auth.key._id };
  const loaders = createLoaders(actor.accountId, { cache: transport === 'http' });
  return { requestId, actor, key: auth.key, authenticated: true, clientIp, config, loaders, errorCodes: [] };
}

/**
 * The context of a request sent without a key, which http.ts admits only when its operation calls
 * public fields alone (publicOperations.ts). There is no caller: reading `actor`, `key` or `loaders`
 * throws `authentication_failed`, so a resolver that needs a key cannot run without one (requireOperation
 * reads `key` for every operation that is not public). The refusals are getters of the class, on its
 * prototype, because Apollo copies the context with Object.assign, which would call own getters.
 */
class KeylessContext implements GraphQLContext {
  readonly authenticated = false;
  readonly errorCodes: string[] = [];
  constructor(
    readonly requestId: string,
    readonly config: Config,
    readonly clientIp: string,
  ) {}
  get actor(): Actor {
    throw authenticationFailed();
  }
  get key(): ApiKeyRecord {
    throw authenticationFailed();
  }
  get loaders(): Loaders {
    throw authenticationFailed();
  }
}

export function createKeylessContext(requestId: string, config: Config, clientIp: string): GraphQLContext {
  return new KeylessContext(requestId, config, clientIp);
}

/**
 * Every root field and every nested field that reads another resource names the REST operation it
 * mirrors; the key needs what that operation needs (its `x-permission` in openapi.yaml, as REST checks),
 * so a restricted key gets the same answers over both APIs. A public operation needs no key.
 */
export function requireOperation(ctx: GraphQLContext, operationId: OperationId): void {
  const op = getOperation(operationId);
  const need = op.permission as Requirement | null;
  if (need !== null && !keyAllows(ctx.key, need)) {
    throw new ApiError('permission_denied', `This API key is not allowed to call ${op.method.toUpperCase()} ${op.path}`);
  }
}
