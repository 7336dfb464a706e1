import type { components, operations as ContractOperations } from '../../generated/openapi';
import type { ApiKeyRecord } from '../domain/accounts/apiKeyModel';
import type { AccountClock } from '../domain/accounts/accountModel';
import type { IdempotentAttempt } from '../domain/idempotency/idempotencyService';
import type { Actor } from '../domain/payments/actor';
import type { ClientTokenCaller, KeyCaller, PublicCaller } from './caller';
import type { OperationId, operations } from './contract';
import type { PrefetchedOf } from './prefetch';
import type { GatewaySettings } from './settings';
import type { GatewayRuntime } from '../domain/gatewayRuntime';

/**
 * The contract's types (generated/openapi.ts, from openapi.yaml) as handlers see them: what a validated
 * request holds, and the resources. Nothing here is typed by hand again.
 */

export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];

type Contract<K> = K extends keyof ContractOperations ? ContractOperations[K] : never;
/** A parameter group the operation does not have (`never`) is an empty object after validation. */
type Group<T> = [NonNullable<T>] extends [never] ? Record<string, never> : NonNullable<T>;

export type PathParams<K extends OperationId> = Group<Contract<K>['parameters']['path']>;
/**
 * Query parameters openapi.yaml gives a `default` (every list's `limit`): the params validator fills
 * them in, so they are there after validation though the contract's type marks them optional
 * (test/operations/types.test.ts holds this list to openapi.yaml).
 */
export const DEFAULTED_QUERY_PARAMETERS = ['limit'] as const;
type WithDefaults<T> = T & { [P in (typeof DEFAULTED_QUERY_PARAMETERS)[number] & keyof T]-?: NonNullable<T[P]> };
export type QueryParams<K extends OperationId> = WithDefaults<Group<Contract<K>['parameters']['query']>>;
export type RequestBody<K extends OperationId> =
  NonNullable<Contract<K>['requestBody']> extends { content: { 'application/json': infer B } } ? B : Record<string, never>;

/** A request after the generated validators: coerced, defaulted, each part of the contract's type. */
export interface OperationInput<K extends OperationId> {
  params: PathParams<K>;
  query: QueryParams<K>;
  body: RequestBody<K>;
  /** Header names lower-cased (as Node gives them), so not the contract's spelling. */
  headers: Record<string, string | undefined>;
}

/** Operations of the /v1 API (not the root pages and probes). */
export type ApiOperationId = { [K in OperationId]: (typeof operations)[K]['basePath'] extends '/v1' ? K : never }[OperationId];
/** Operations that answer with an event stream: the protocol writes those (REST's SSE routes). */
export type StreamOperationId = 'streamPaymentIntentEvents' | 'streamPublicPaymentEvents';
/** Operations `execute` runs: one handler each. */
export type ExecutableOperationId = Exclude<ApiOperationId, StreamOperationId>;
type PublicOperationId = { [K in OperationId]: (typeof operations)[K]['permission'] extends null ? K : never }[OperationId];

/** What a handler of an operation that needs a key gets: the key (authorize has let it through). */
export interface KeyContext<K extends OperationId = OperationId> {
  caller: KeyCaller;
  actor: Actor;
  key: ApiKeyRecord;
  requestId: string;
  /** The gateway's settings (public base URL, webhook target policy). */
  settings: GatewaySettings;
  /** The gateway's own services: what the domain's writes and attempts are handed (gatewayRuntime.ts). */
  runtime: GatewayRuntime;
  /** On idempotent operations: the attempt runIdempotent runs (the id the key reserves for the object). */
  idempotency?: IdempotentAttempt;
  /** The account's clock as this request's authentication read it, when the protocol has it (REST). */
  account?: AccountClock;
  /** The operation's work started before its handler (prefetch.ts). Absent when nothing was. */
  prefetched?: PrefetchedOf<K>;
}

/** What a handler of a public operation gets: nobody, or a client token on the operations that take one. */
export interface PublicContext {
  caller: PublicCaller | ClientTokenCaller;
  requestId: string;
  settings: GatewaySettings;
  runtime: GatewayRuntime;
}

export type ContextOf<K extends OperationId> = K extends PublicOperationId ? PublicContext : KeyContext<K>;

type Success<R> = R extends { 200: infer S } ? S : R extends { 201: infer S } ? S : R extends { 202: infer S } ? S : never;
/** The body of the operation's success answer in the contract (JSON, or the text of an SVG). */
export type SuccessBody<K extends OperationId> =
  Success<Contract<K>['responses']> extends { content: infer C } ? C[keyof C] : never;

/**
 * Operations whose resources the domain still types as strings where the contract has enums: their
 * handlers are not yet held to the contract's answer. Event types (EventSpec, stored events and the
 * deliveries copied from them are `string`; an event's `data` is the contract's per-type union) and log
 * error codes (res.locals.errorCode, which the REST and GraphQL layers set, is read as a string). Every
 * other handler must return exactly what openapi.yaml describes.
 */
type HandTypedAnswers =
  | 'listLogs'
  | 'listEvents'
  | 'listWebhookDeliveries'
  | 'retryWebhookDelivery';

/** A handler returns the body of the operation's success answer (its status is the contract's). */
export type Handler<K extends OperationId> = (ctx: ContextOf<K>, input: OperationInput<K>) => Promise<K extends HandTypedAnswers ? unknown : SuccessBody<K>>;

export type HandlerTable<K extends ExecutableOperationId> = { [Op in K]: Handler<Op> };
