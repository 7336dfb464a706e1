import type { Config } from '../config';
import type { AdmittedRequest } from '../operations/admit';
import type { ApiKeyRecord } from '../domain/accounts/apiKeyModel';
import type { ClientTokenGrant } from '../domain/clientTokens/clientTokenService';
import { authenticationFailed } from '../domain/accounts/apiKeyService';
import type { Actor } from '../domain/payments/actor';
import { authorize } from '../operations/authorize';
import { keyCaller, PUBLIC_CALLER, type Caller, type KeyCaller } from '../operations/caller';
import type { OperationId } from '../operations/contract';
import { createLoaders, type Loaders } from './loaders';
import type { GatewayRuntime } from '../domain/gatewayRuntime';
import type { ClientTokenStreams } from '../realtime/clientTokenStreams';

/**
 * What every resolver gets: who is calling (one request over HTTP, one operation over WebSocket). It is
 * the request as admitted (AdmittedRequest: the caller, the account's clock as the count read it, the
 * read started beside the count), which the resolvers hand whole to `execute`.
 */
export interface GraphQLContext extends AdmittedRequest {
  requestId: string;
  /** Who calls, as the operations layer knows it (authorize, execute). */
  caller: Caller;
  actor: Actor;
  key: ApiKeyRecord;
  /** False for a request sent without a key (only public fields run then; see KeylessContext). */
  authenticated: boolean;
  /** The client's address, which the per-IP limits of public fields count (as REST's public routes). */
  clientIp: string;
  config: Config;
  /** The gateway's own services, for the operations its fields run (src/domain/gatewayRuntime.ts). */
  runtime: GatewayRuntime;
  /** Per-request DataLoaders: a list never queries once per item. */
  loaders: Loaders;
  /** Error codes of the answer, for the request log (GET /logs `error_code`). */
  errorCodes: string[];
  /** Set when a client token authenticated the request (clientTokenScope.ts); `key` is then refused. */
  clientToken?: ClientTokenGrant;
  /** With `clientToken`: the gateway's streams of client tokens, which its subscriptions join. */
  clientTokenStreams?: ClientTokenStreams;
}

/**
 * `transport` 'ws': one context serves every message of a subscription, so loaders do not cache, and
 * what admission read (`admitted`) is not kept: it would be stale by the next message.
 */
export function createContext(
  key: ApiKeyRecord,
  requestId: string,
  config: Config,
  runtime: GatewayRuntime,
  clientIp: string,
  transport: 'http' | 'ws' = 'http',
  admitted: Pick<AdmittedRequest, 'account' | 'ahead'> = {},
): GraphQLContext {
  const caller = keyCaller(key);
  if (transport === 'ws') return new LongLivedContext(caller, key, requestId, config, runtime, clientIp);
  return {
    requestId,
    caller,
    actor: caller.actor,
    key,
    authenticated: true,
    clientIp,
    config,
    runtime,
    errorCodes: [],
    loaders: createLoaders(caller.actor.accountId, { cache: true }),
    // Always both fields, undefined or not: one object shape for every request's context.
    account: admitted.account,
    ahead: admitted.ahead,
  };
}

/**
 * A subscription's context: it lives as long as the subscription, and its messages seldom read a nested
 * list, so the loaders are made when first used. A class, so that the lazy getter sits on the prototype:
 * an object literal's own getter gave every subscription a hidden class of its own (about 300 bytes
 * each, bench/HISTORY.md, "Issue 56: RSS after a GC").
 */
class LongLivedContext implements GraphQLContext {
  readonly authenticated = true;
  readonly errorCodes: string[] = [];
  readonly actor: Actor;
  #loaders: Loaders | undefined;
  constructor(
    readonly caller: KeyCaller,
    readonly key: ApiKeyRecord,
    readonly requestId: string,
    readonly config: Config,
    readonly runtime: GatewayRuntime,
    readonly clientIp: string,
  ) {
    this.actor = caller.actor;
  }
  get loaders(): Loaders {
    return (this.#loaders ??= createLoaders(this.actor.accountId, { cache: false }));
  }
}

/**
 * The context of a request sent without a key, which http.ts admits only when its operation calls
 * public fields alone (publicOperations.ts). Its caller is the public one (authorize answers it
 * `authentication_failed` for every operation that is not public), and reading `actor`, `key` or
 * `loaders` throws `authentication_failed` too. The refusals are getters of the class, on its
 * prototype, because Apollo copies the context with Object.assign, which would call own getters.
 */
class KeylessContext implements GraphQLContext {
  readonly authenticated = false;
  readonly caller = PUBLIC_CALLER;
  readonly errorCodes: string[] = [];
  constructor(
    readonly requestId: string,
    readonly config: Config,
    readonly runtime: GatewayRuntime,
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

export function createKeylessContext(requestId: string, config: Config, runtime: GatewayRuntime, clientIp: string): GraphQLContext {
  return new KeylessContext(requestId, config, runtime, clientIp);
}

/**
 * Every root field and every nested field that reads another resource names the REST operation it
 * mirrors; the caller needs what that operation needs (operations/authorize.ts, the one permission
 * check of both APIs).
 */
export function requireOperation(ctx: GraphQLContext, operationId: OperationId): void {
  authorize(ctx.caller, operationId);
}
