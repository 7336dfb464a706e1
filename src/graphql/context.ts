import type { Config } from '../config';
import type { AccountClock } from '../domain/accounts/accountModel';
import type { ApiKeyRecord } from '../domain/accounts/apiKeyModel';
import type { ClientTokenGrant } from '../domain/clientTokens/clientTokenService';
import { authenticationFailed } from '../domain/accounts/apiKeyService';
import type { Actor } from '../domain/payments/actor';
import { authorize } from '../operations/authorize';
import { keyCaller, PUBLIC_CALLER, type Caller, type KeyCaller } from '../operations/caller';
import type { OperationId } from '../operations/contract';
import { createLoaders, type Loaders } from './loaders';
import type { GatewayRuntime } from '../domain/gatewayRuntime';

/** What every resolver gets: who is calling (one request over HTTP, one operation over WebSocket). */
export interface GraphQLContext {
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
  /**
   * The account's sandbox clock as this request's admission count read it (a key's request over HTTP),
   * for the first operation the request runs, as REST hands it to `execute` (createPaymentIntent then
   * reads no account). Taken once (takeAdmissionAccount): a later mutation field of the same request
   * may have moved the clock (advanceSandboxClock), so it reads the account again. A box, so that a
   * shallow copy of the context (Apollo makes some) shares it.
   */
  admissionAccount?: { clock?: AccountClock };
}

/** The admission's read of the account, for the first operation that asks; undefined after that. */
export function takeAdmissionAccount(ctx: GraphQLContext): AccountClock | undefined {
  const box = ctx.admissionAccount;
  if (!box) return undefined;
  const clock = box.clock;
  box.clock = undefined;
  return clock;
}

/** `transport` 'ws': one context serves every message of a subscription, so loaders do not cache. */
export function createContext(
  auth: { key: ApiKeyRecord; account?: AccountClock },
  requestId: string,
  config: Config,
  runtime: GatewayRuntime,
  clientIp: string,
  transport: 'http' | 'ws' = 'http',
): GraphQLContext {
  const caller = keyCaller(auth.key);
  if (transport === 'ws') return new LongLivedContext(caller, auth.key, requestId, config, runtime, clientIp);
  return {
    requestId,
    caller,
    actor: caller.actor,
    key: auth.key,
    authenticated: true,
    clientIp,
    config,
    runtime,
    errorCodes: [],
    loaders: createLoaders(caller.actor.accountId, { cache: true }),
    admissionAccount: auth.account && { clock: auth.account },
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
