import type { Config } from '../config';
import type { ApiKeyRecord } from '../domain/accounts/apiKey.model';
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
  config: Config;
  /** Per-request DataLoaders: a list never queries once per item. */
  loaders: Loaders;
  /** Error codes of the answer, for the request log (GET /logs `error_code`). */
  errorCodes: string[];
}

/** `transport` 'ws': one context serves every message of a subscription, so loaders do not cache. */
export function createContext(auth: { key: ApiKeyRecord }, requestId: string, config: Config, transport: 'http' | 'ws' = 'http'): GraphQLContext {
  const actor: Actor = { accountId: auth.key.account_id, apiKeyId: auth.key._id };
  const loaders = createLoaders(actor.accountId, { cache: transport === 'http' });
  return { requestId, actor, key: auth.key, config, loaders, errorCodes: [] };
}

/**
 * Every root field and every nested field that reads another resource names the REST operation it
 * mirrors; the key needs what that operation needs (its `x-permission` in openapi.yaml, as REST checks),
 * so a restricted key gets the same answers over both APIs.
 */
export function requireOperation(ctx: GraphQLContext, operationId: OperationId): void {
  const op = getOperation(operationId);
  const need = op.permission as Requirement | null;
  if (need !== null && !keyAllows(ctx.key, need)) {
    throw new ApiError('permission_denied', `This API key is not allowed to call ${op.method.toUpperCase()} ${op.path}`);
  }
}
